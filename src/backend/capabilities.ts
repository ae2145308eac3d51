// What the chosen backend can do, stated once when the connection is configured: `config` and the
// CLI refuse an option from this statement, never by counting URLs, and messages name the store
// from it. One Redis (a server, Sentinel, Cluster) runs the line (docs/reference/waiting-in-line.md)
// and keeps the history; a Redlock quorum of independent servers has neither
// (docs/operations/deployments.md).

import type { HolderKind } from './mode.js';

export interface Capabilities {
  /** What the backend is, for messages: "one Redis" or "a Redlock quorum of 3". */
  readonly name: string;
  /** The store, for messages: "Redis". */
  readonly store: string;
  /** What it takes to have it all, for the usage errors: "one Redis (a server, …)". */
  readonly full: string;
  /** Its members, for messages ("Redis instances"), and how status --json names one's view ("redis"). */
  readonly members: { noun: string; field: string };
  /**
   * How many independent members vote, and how many must agree (a Redlock quorum; 1 of 1 for one store,
   * however many endpoints reach it: a Sentinel's, a Cluster's, an etcd cluster's, which agrees by itself).
   */
  readonly total: number;
  readonly quorum: number;
  /** A FIFO line of waiters. */
  readonly line: boolean;
  /** The holder kinds it can hold a key as (MODES): every store has 'exclusive'; --shared and --slots n need more. */
  readonly kinds: readonly HolderKind[];
  /** The per-key history (dlock history, the events it records) and totals (dlock metrics' counters). */
  readonly history: boolean;
  /** --once-per: the done mark a release writes. */
  readonly oncePer: boolean;
  /** --sync-replicas: wait until replicas have the hold. */
  readonly syncReplicas: boolean;
  /** dlock doctor checks it. */
  readonly doctor: boolean;
  /** A waiter that cannot hear of a release notices it by polling within this (ms). */
  readonly pollCapMs: number;
  /** Why a release could not tell the waiters, and the grant that cures it: "PUBLISH denied: grant +publish". */
  readonly notifyDenied: string;
  /** A waiter's place in line lapses within this when it cannot leave (ms); undefined without a line. */
  readonly placeLeaseMs: number | undefined;
}
