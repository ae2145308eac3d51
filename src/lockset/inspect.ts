// What each instance says about one lock, and what a majority of them says (status, release, the spinner).

import type { Holder } from '../lock/holder.js';
import { inspectOn, type LockState } from '../lock/inspect.js';
import type { LockKeys } from '../lock/keys.js';
import { instanceFailure, type InstanceFailure } from '../redis/client.js';
import type { LockSet } from './lockset.js';
import { quorumSize } from './quorum.js';

export interface InstanceView {
  redis: string;
  held: boolean;
  holder?: Holder;
  ttl_ms?: number;
  error?: string;
  /** Why it did not answer, as data (not shown as such: `error` is its reason). */
  failure?: InstanceFailure;
  /** Everything it said: every holder, the mode, the line. */
  state?: LockState;
}

/** held: one owner has a quorum; free: nobody can have one; unknown: the failed instances could complete one. */
export type Verdict = 'held' | 'free' | 'unknown';

/** Every configured instance's view of the lock at `keys`, in the order the URLs were given. */
export async function inspectAll(set: LockSet, keys: LockKeys, order: string[]): Promise<InstanceView[]> {
  const views: InstanceView[] = await Promise.all(
    set.instances.map(async (instance) => {
      try {
        const state = await inspectOn(instance, keys, set.timeoutMs);
        return {
          redis: instance.target.label,
          held: state.holder !== undefined,
          holder: state.holder,
          ttl_ms: state.holder?.ttlLeftMs ?? state.pttlMs,
          state,
        };
      } catch (error) {
        const failure = instanceFailure(instance.target.label, error);
        return { redis: failure.label, held: false, error: failure.reason, failure };
      }
    }),
  );
  for (const failure of set.unreachable)
    views.push({ redis: failure.label, held: false, error: failure.reason, failure });
  return views.sort((a, b) => order.indexOf(a.redis) - order.indexOf(b.redis));
}

/** The view of the owner that holds a quorum of instances, if one does, and the verdict. */
export function majority(views: InstanceView[], total: number): { verdict: Verdict; agreed?: InstanceView } {
  const counts = new Map<string, number>();
  for (const v of views) if (v.holder) counts.set(v.holder.owner, (counts.get(v.holder.owner) ?? 0) + 1);
  for (const [owner, count] of counts) {
    if (count >= quorumSize(total)) return { verdict: 'held', agreed: views.find((v) => v.holder?.owner === owner) };
  }
  const failed = views.filter((v) => v.error).length;
  const couldHide = failed > 0 && Math.max(0, ...counts.values()) + failed >= quorumSize(total);
  return { verdict: couldHide ? 'unknown' : 'free' };
}
