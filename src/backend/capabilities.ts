// What the chosen backend can do, stated once when the connection is configured: `config` and the
// CLI refuse an option from this statement, never by counting URLs, and messages name the store
// from it, and each refusal is worded by the store that refuses (`refusals`). One Redis (a server,
// Sentinel, Cluster) runs the line (docs/reference/waiting-in-line.md) and keeps the history; a
// Redlock quorum of independent servers has neither (docs/operations/deployments.md).

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
  /** --priority: a line that serves higher priorities first. */
  readonly priority: boolean;
  /** --supersede: a line where a newer waiter takes the places of older ones that asked for it. */
  readonly supersede: boolean;
  /**
   * `dlock hold`/`unhold` and --reason: a holder's reason, user and a hold without a process, stored with the
   * holder and its place in line, recorded in the history.
   */
  readonly holds: boolean;
  /**
   * `dlock hold --wait`: a hold that waits in line for its turn. Where a place is the hold's own lease (etcd), a
   * hold that died while waiting would keep its place for the whole hold: refused there.
   */
  readonly holdInLine: boolean;
  /** --sync-replicas: wait until replicas have the hold. */
  readonly syncReplicas: boolean;
  /** dlock doctor checks it. */
  readonly doctor: boolean;
  /** A waiter that cannot hear of a release notices it by polling within this (ms). */
  readonly pollCapMs: number;
  /**
   * Why a release could not tell the waiters, and the grant that cures it: "PUBLISH denied: grant +publish".
   * Undefined where a release always reaches the waiters (they watch the store itself, as etcd's do).
   */
  readonly notifyDenied?: string;
  /**
   * A waiter's place in line lapses within this when it cannot leave (ms); undefined without a line. It may be
   * the connection's own value: etcd's places are keys on the hold's lease, so it is that lease's TTL.
   */
  readonly placeLeaseMs: number | undefined;
  /**
   * Why the store refuses each feature it lacks (a kind not in `kinds`, `oncePer`, `history`, `syncReplicas`,
   * `priority`, `supersede`, `doctor`, `holds`, `holdInLine` false), in its own words: the usage error's text
   * after the option or command, e.g. for --once-per "needs one Redis (…), not a Redlock quorum of 3: the done
   * mark is written by the release, which may reach only some instances". A feature it lacks without a reason
   * here is refused in refusal()'s neutral words.
   */
  readonly refusals: Readonly<Partial<Record<Refusable, string>>>;
}

/** The features a store may lack, each refused with 64 and a reason (Capabilities.refusals). */
export type Refusable =
  'kinds' | 'oncePer' | 'priority' | 'supersede' | 'history' | 'syncReplicas' | 'doctor' | 'holds' | 'holdInLine';

/** Why `can` refuses `feature`: the usage error's text after the option or command ("--once-per ", "history "). */
export function refusal(can: Capabilities, feature: Refusable): string {
  return can.refusals[feature] ?? NEUTRAL[feature](can);
}

const NEUTRAL: Record<Refusable, (can: Capabilities) => string> = {
  kinds: (can) => `needs ${can.full}, not ${can.name}`,
  oncePer: (can) => `needs ${can.full}, not ${can.name}`,
  priority: (can) => `needs ${can.full}, not ${can.name}`,
  supersede: (can) => `needs a store with a line, not ${can.name}`,
  history: (can) => `needs ${can.full}, not ${can.name}: no history is kept`,
  syncReplicas: (can) => `needs a store that can wait for its replicas, not ${can.name}`,
  doctor: (can) => `has no checks for ${can.store} (${can.name})`,
  holds: (can) => `needs ${can.full}, not ${can.name}`,
  holdInLine: (can) => `needs ${can.full}, not ${can.name}`,
};
