// Release on every instance in parallel: owner-checked, best effort, never retried.

import { releaseOn } from '../lock/release.js';
import type { LockSet } from './lockset.js';

/**
 * Release where `which[i]` is true (default: everywhere); resolves to how many were ours.
 * `notify: false` does not wake the waiters (see releaseOn).
 */
export async function releaseAll(set: LockSet, which?: boolean[], notify = true): Promise<number> {
  const results = await Promise.allSettled(
    set.instances.map((instance, i) => (which && !which[i] ? Promise.resolve(false) : releaseOn(instance, set.keys, set.owner, set.timeoutMs, notify))),
  );
  return results.filter((r) => r.status === 'fulfilled' && r.value).length;
}
