// release --force across the lock set: every instance asked at once, whom each removed, and which failed.

import { hostname } from 'node:os';
import { forceReleaseScript } from './lock/inspect.js';
import { REMOVED } from './lock/replies.js';
import { instanceFailure, type MemberFailure } from './client/client.js';
import type { LockSet } from './lockset.js';
import { clockAt } from '../../backend/clock.js';
import type { RemovedHolder } from '../../backend/backend.js';

/**
 * Take the lock from whoever holds it on every instance (with `slot`, only that holder of
 * --slots; `now`: delete rather than keep each removed hold closed until its lease runs out).
 * Returns every holder removed, one per owner, and each instance that failed.
 */
export async function forceReleaseAll(
  set: LockSet,
  now: boolean,
  slot?: number,
): Promise<{ removed: RemovedHolder[]; failed: MemberFailure[] }> {
  // Who forced it goes into the history.
  const input = { now, slot, host: hostname(), pid: process.pid };
  const results = await Promise.allSettled(
    set.instances.map((instance) => forceReleaseScript.run(instance.client, set.keys, input, set.timeoutMs)),
  );
  const removed = results.flatMap((r) =>
    r.status === 'fulfilled'
      ? r.value.holders.map((holder) => ({
          ...holder,
          closedForMs: r.value.closedForMs,
          clock: clockAt(r.value.serverMs),
        }))
      : [],
  );
  const failed = [
    ...results.flatMap((r, i) =>
      r.status === 'rejected' ? [instanceFailure(set.instances[i].target.label, r.reason)] : [],
    ),
    ...set.unreachable,
  ];
  return { removed: [...new Map(removed.map((holder) => [identity(holder), holder])).values()], failed };
}

/** One removed hold seen on several instances is reported once (a hold closed before has no owner left). */
function identity(holder: RemovedHolder): string {
  return holder.owner && holder.owner !== REMOVED
    ? holder.owner
    : `${holder.owner}:${holder.host}:${holder.pid}:${holder.fence}:${holder.slot}`;
}
