// One renewal across the lock set: success only with a quorum, within validity. In Redlock
// mode, an instance that lost the key while a quorum still holds it for us is re-taken.

import { extendOn } from '../lock/extend.js';
import { extendHolderOn } from '../lock/line.js';
import { MODES, type RenewScript } from '../lock/mode.js';
import { retakeOn, type HeldLock } from '../lock/retake.js';
import { failureText } from '../redis/client.js';
import { now } from '../clock.js';
import { fanOut, notWith, type InstanceFailure, type LockSet } from './lockset.js';
import { quorumSize, renewTimeoutMs, tally, validityMs, type Outcome } from './quorum.js';

export type Renewal =
  /**
   * `failures`: the instances that did not renew (a quorum did); `retaken`: the labels of
   * instances that had lost the key and hold it for us again.
   */
  | { kind: 'extended'; startedAt: number; failures: InstanceFailure[]; retaken: string[] }
  /** A quorum answered that the lock is not ours: it is lost now. */
  | { kind: 'refused' }
  /** Errors or timeouts: retry until the local deadline. */
  | { kind: 'failed'; errors: string[] };

export interface RenewOptions {
  /** Monotonic ms at which the lease gives up: no request needs to wait past it. */
  givesUpAt: number;
  /** Redlock: what a re-taken instance gets (the held token, the holder's metadata). */
  held?: HeldLock;
}

/** The renew script each kind names: a holder of --slots/--shared has its own lease inside the lock's hash. */
const RENEW: Record<RenewScript, typeof extendOn> = { extend: extendOn, 'extend-holder': extendHolderOn };

export async function extendAll(set: LockSet, { givesUpAt, held }: RenewOptions): Promise<Renewal> {
  const startedAt = now();
  // Sized from the time left, not from the TTL: a slow link still renews. Once a quorum renewed,
  // a hung instance gets only the acquire's per-instance timeout more (small next to the TTL).
  const timeoutMs = renewTimeoutMs(set.connectTimeoutMs, givesUpAt - startedAt);
  const extend = RENEW[MODES[set.mode.kind].renew];
  // One instance keeps a history: a refused renewal of a hold is recorded there as its loss.
  const record =
    held && set.total === 1
      ? { host: held.meta.host, pid: held.meta.pid, cmd: held.meta.cmd, fence: held.fence }
      : undefined;
  const round = await fanOut(
    set,
    (i) => extend(i, set.keys, set.owner, set.ttlMs, timeoutMs, record),
    (ok) => ok,
    set.timeoutMs,
  );
  const verdict = tally(round.outcomes, set.total);
  if (verdict === 'won' && validityMs(set.ttlMs, startedAt, now()) > 0) {
    const retaken = held && set.total > 1 ? await retake(set, round.outcomes, startedAt, held) : [];
    const failures = notWith(set, round, 'the lock is gone there (expired, deleted, or lost in a restart)').filter(
      ({ label }) => !retaken.includes(label),
    );
    return { kind: 'extended', startedAt, failures, retaken };
  }
  if (verdict === 'refused') return { kind: 'refused' };
  return {
    kind: 'failed',
    errors: round.failures.length ? round.failures.map(failureText) : ['no quorum renewed in time'],
  };
}

/**
 * Put the lock back where the extend found it gone (outcome "no"), while the quorum that just
 * renewed it proves nobody else can hold one during our validity. The script leaves a key of
 * another owner alone, and raises the fence counter to the held token. Best effort: an instance
 * that fails is tried again at the next renewal. Returns the labels of the re-taken instances.
 */
async function retake(set: LockSet, outcomes: Outcome[], startedAt: number, held: HeldLock): Promise<string[]> {
  const targets = set.instances.filter((_, i) => outcomes[i] === 'no');
  // Never on a minority view: the instances that still have our owner must be a quorum.
  const confirmed = outcomes.filter((o) => o === 'yes').length;
  if (targets.length === 0 || confirmed < quorumSize(set.total)) return [];
  const leftMs = validityMs(set.ttlMs, startedAt, now());
  if (leftMs <= 0) return [];
  const results = await Promise.allSettled(
    targets.map((i) => retakeOn(i, set.keys, set.owner, leftMs, set.ttlMs, held, set.timeoutMs)),
  );
  return targets.flatMap((instance, n) =>
    results[n].status === 'fulfilled' && results[n].value ? [instance.target.label] : [],
  );
}
