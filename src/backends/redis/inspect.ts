// One read of one lock across the instances (status, the listing, metrics, the spinner): what each
// says, what a majority says, and, on one Redis, the whole state (every holder, the mode, the line).

import type { LockRead, MemberView, Verdict } from '../../backend/backend.js';
import { clockAt } from '../../backend/clock.js';
import { inspectScript, type LockState } from './lock/inspect.js';
import type { LockKeys } from './lock/keys.js';
import { instanceFailure } from './client/client.js';
import type { LockSet } from './lockset.js';
import { quorumSize } from './quorum.js';
import { strategyOf } from './strategy.js';

/** One instance's view, with everything it said (only a lone instance's state is the whole lock's). */
type InstanceView = MemberView & { state?: LockState };

/** Every configured instance's view of the lock at `keys`, in the order the URLs were given. */
async function inspectAll(set: LockSet, keys: LockKeys): Promise<InstanceView[]> {
  const views: InstanceView[] = await Promise.all(
    set.instances.map(async (instance): Promise<InstanceView> => {
      try {
        const state = await inspectScript.run(instance.client, keys, undefined, set.timeoutMs);
        return {
          label: instance.target.label,
          held: state.holder !== undefined,
          holder: state.holder,
          ttlLeftMs: state.holder?.ttlLeftMs ?? state.ttlLeftMs,
          state,
          clock: clockAt(state.serverMs),
        };
      } catch (error) {
        const failure = instanceFailure(instance.target.label, error);
        return { label: failure.label, held: false, failure };
      }
    }),
  );
  for (const failure of set.unreachable) views.push({ label: failure.label, held: false, failure });
  return views.sort((a, b) => set.order.indexOf(a.label) - set.order.indexOf(b.label));
}

/** The view of the owner that holds a quorum of instances, if one does, and the verdict. */
function majority(views: MemberView[], total: number): { verdict: Verdict; agreed?: MemberView } {
  const counts = new Map<string, number>();
  for (const v of views) if (v.holder) counts.set(v.holder.owner, (counts.get(v.holder.owner) ?? 0) + 1);
  for (const [owner, count] of counts) {
    if (count >= quorumSize(total)) return { verdict: 'held', agreed: views.find((v) => v.holder?.owner === owner) };
  }
  const failed = views.filter((v) => v.failure).length;
  const couldHide = failed > 0 && Math.max(0, ...counts.values()) + failed >= quorumSize(total);
  return { verdict: couldHide ? 'unknown' : 'free' };
}

/** The lock at `keys` as a majority reads it. */
export async function readLock(set: LockSet, keys: LockKeys = set.keys): Promise<LockRead> {
  const views = await inspectAll(set, keys);
  const { verdict, agreed } = majority(views, set.total);
  const state = strategyOf(set).wholeState(views.map((view) => view.state));
  const members = views.map(({ state: _, ...view }) => view);
  const clock = (agreed ?? views.find((view) => view.clock))?.clock;
  return {
    verdict,
    ...(agreed ? { agreed: members[views.indexOf(agreed as InstanceView)] } : {}),
    ...(state ? { state } : {}),
    members,
    ...(clock ? { clock } : {}),
  };
}
