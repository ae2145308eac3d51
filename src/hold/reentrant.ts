// Nested `dlock run` on the key its parent holds: run under the parent's lock, no deadlock.

import { inspectOn } from '../lock/inspect.js';
import type { LockSet } from '../lockset/lockset.js';
import { tally } from '../lockset/quorum.js';

/** true when a quorum of instances says `owner` (the parent's DLOCK_TOKEN) holds the lock (alone, or as one holder of --slots/--shared). */
export async function isHeldBy(set: LockSet, owner: string): Promise<boolean> {
  const states = await Promise.allSettled(set.instances.map((i) => inspectOn(i, set.keys, set.timeoutMs)));
  const outcomes = states.map((s) => (s.status === 'rejected' ? 'error' : s.value.holders.some((holder) => holder.owner === owner) ? 'yes' : 'no'));
  return tally(outcomes, set.total) === 'won';
}
