// One renewal across the lock set: success only with a quorum, within validity.

import { extendOn } from '../lock/extend.js';
import { now } from '../timeout.js';
import { fanOut, notWith, type InstanceFailure, type LockSet } from './lockset.js';
import { tally, validityMs } from './quorum.js';

export type Renewal =
  /** `failures`: the instances that did not renew (a quorum did). */
  | { kind: 'extended'; startedAt: number; failures: InstanceFailure[] }
  /** A quorum answered that the lock is not ours: it is lost now. */
  | { kind: 'refused' }
  /** Errors or timeouts: retry until the local deadline. */
  | { kind: 'failed'; errors: string[] };

export async function extendAll(set: LockSet): Promise<Renewal> {
  const startedAt = now();
  // A renewal that hangs must leave time to retry before the local deadline: ttl/10 at most.
  const timeoutMs = Math.max(1, Math.min(set.timeoutMs, Math.floor(set.ttlMs / 10)));
  const round = await fanOut(set, (i) => extendOn(i, set.keys, set.owner, set.ttlMs, timeoutMs), (ok) => ok);
  const verdict = tally(round.outcomes, set.total);
  if (verdict === 'won' && validityMs(set.ttlMs, startedAt, now()) > 0) return { kind: 'extended', startedAt, failures: notWith(set, round, 'the lock is gone there (expired, deleted, or lost in a restart)') };
  if (verdict === 'refused') return { kind: 'refused' };
  return { kind: 'failed', errors: round.errors.length ? round.errors : ['no quorum renewed in time'] };
}
