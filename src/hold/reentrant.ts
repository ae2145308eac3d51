// Nested `dlock run` on the key its parent holds: run under the parent's lock, no deadlock.

import { inspectOn } from '../lock/inspect.js';
import type { LockSet } from '../lockset/lockset.js';
import { unavailable } from '../lockset/open.js';
import { tally } from '../lockset/quorum.js';
import { instanceFailure } from '../redis/client.js';

/** true when a quorum of instances says `owner` (the parent's DLOCK_TOKEN) holds the lock (alone, or as one holder of --slots/--shared). */
export async function isHeldBy(set: LockSet, owner: string): Promise<boolean> {
  const states = await Promise.allSettled(set.instances.map((i) => inspectOn(i, set.keys, set.timeoutMs)));
  const outcomes = states.map((s) => (s.status === 'rejected' ? 'error' : s.value.holders.some((holder) => holder.owner === owner) ? 'yes' : 'no'));
  if (tally(outcomes, set.total) === 'won') return true;
  // Unread for good (a grant missing, such as +hgetall), the nested run would wait for its own parent: 69.
  const failures = states.flatMap((s, i) => {
    return s.status === 'rejected' ? [instanceFailure(set.instances[i].target.label, s.reason)] : [];
  });
  if (failures.some(({ permanent }) => permanent)) throw unavailable(set.total, failures);
  return false;
}
