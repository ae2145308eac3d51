// Every read of one lock across the instances: what each says, what a majority says (status), and
// the holder the spinner and the busy message show.

import { MODES, type HoldMode } from '../../backend/mode.js';
import { inspectOn, type LockState } from './lock/inspect.js';
import type { LockKeys } from './lock/keys.js';
import { instanceFailure, type MemberFailure } from './client/client.js';
import type { LockSet } from './lockset.js';
import { quorumSize } from './quorum.js';
import { clockAt, type ServerClock } from '../../backend/clock.js';
import { strategyOf } from './strategy.js';
import { type Holder } from '../../backend/holder.js';

export interface InstanceView {
  redis: string;
  held: boolean;
  holder?: Holder;
  ttl_ms?: number;
  error?: string;
  /** Why it did not answer, as data (not shown as such: `error` is its reason). */
  failure?: MemberFailure;
  /** Everything it said: every holder, the mode, the line. */
  state?: LockState;
  /** Its clock at the read: what the ages of its holders and waiters count to. */
  clock?: ServerClock;
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
          clock: clockAt(state.serverMs),
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

export interface HolderSnapshot {
  holder: Holder;
  pttlMs?: number;
  /** The server's clock at the read (its `readAt` ages the TTL left, its `serverMs` the holder's times). */
  clock: ServerClock;
  /**
   * --slots/--shared: how many hold (the holder shown is the one whose lease ends first; while the
   * key is closed by release --force, the closed one whose lease ends last), and the mode.
   */
  others?: { count: number; mode: HoldMode };
  /** How many wait in line. */
  waiting?: number;
}

/**
 * The holder seen on the most instances (a majority's, in Redlock mode); undefined if none.
 * `refused`: instances that refused to be read for good (a missing grant, such as +hgetall):
 * the caller reports those (69), never the lock as merely busy.
 */
export async function holderSnapshot(set: LockSet): Promise<{ snapshot?: HolderSnapshot; refused: MemberFailure[] }> {
  const views = await inspectAll(set, set.keys, []);
  const refused = views.flatMap(({ failure }) => (failure?.permanent ? [failure] : []));
  return { snapshot: snapshotOf(set, views), refused };
}

/** The snapshot from every instance's view. */
function snapshotOf(set: LockSet, views: InstanceView[]): HolderSnapshot | undefined {
  const seen = new Map<string, { count: number; holder: Holder; pttlMs?: number; clock?: ServerClock }>();
  for (const view of views) {
    if (!view.holder) continue;
    const entry = seen.get(view.holder.owner) ?? {
      count: 0,
      holder: view.holder,
      pttlMs: view.ttl_ms,
      clock: view.clock,
    };
    entry.count++;
    seen.set(view.holder.owner, entry);
  }
  const best = [...seen.values()].sort((a, b) => b.count - a.count)[0];
  const state = strategyOf(set).wholeState(views.map((view) => view.state));
  if (state && MODES[state.mode.kind].manyHolders && state.holders.length > 0) {
    // The holder whose lease ends first: its slot is the next to come free. But while release --force
    // keeps the key closed, the closed hold whose lease ends last: nobody enters before it ends.
    const closed = state.holders.filter((holder) => holder.owner === '');
    const first = closed.length
      ? [...closed].sort((a, b) => (b.ttlLeftMs ?? Infinity) - (a.ttlLeftMs ?? Infinity))[0]
      : [...state.holders].sort((a, b) => (a.ttlLeftMs ?? Infinity) - (b.ttlLeftMs ?? Infinity))[0];
    return {
      holder: first,
      pttlMs: first.ttlLeftMs,
      clock: views.find((view) => view.clock)?.clock ?? clockAt(Date.now()),
      others: { count: state.holders.length, mode: state.mode },
      waiting: state.lineLength,
    };
  }
  return (
    best && {
      holder: best.holder,
      pttlMs: best.pttlMs,
      clock: best.clock ?? clockAt(Date.now()),
      ...(state ? { waiting: state.lineLength } : {}),
    }
  );
}
