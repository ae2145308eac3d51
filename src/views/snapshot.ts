// The holder the spinner, the wait-status lines and the busy message show, from one read of the
// lock: the holder seen on the most members (a quorum's), or, for --slots/--shared, the one
// whose lease ends first.

import {
  clockAt,
  type Holder,
  type HoldMode,
  isClosed,
  type LockRead,
  MODES,
  type StoreClock,
} from '../backend/index.js';

export interface HolderSnapshot {
  holder: Holder;
  ttlLeftMs?: number;
  /** The store's clock at the read (its `readAt` ages the TTL left, its `serverMs` the holder's times). */
  clock: StoreClock;
  /**
   * --slots/--shared: how many hold (the holder shown is the one whose lease ends first; while the
   * key is closed by release --force, the closed one whose lease ends last), and the mode.
   */
  others?: { count: number; mode: HoldMode };
  /** How many wait in line. */
  waiting?: number;
}

/** The members that refused for good to be read (a missing grant, such as +hgetall): 69, never "busy". */
export function refusedOf(read: LockRead) {
  return read.members.flatMap(({ failure }) => (failure?.permanent ? [failure] : []));
}

/** The snapshot of a read; undefined when nobody holds the lock. */
export function snapshotOf({ members, state }: LockRead): HolderSnapshot | undefined {
  const seen = new Map<string, { count: number; holder: Holder; ttlLeftMs?: number; clock?: StoreClock }>();
  for (const view of members) {
    if (!view.holder) continue;
    const entry = seen.get(view.holder.owner) ?? {
      count: 0,
      holder: view.holder,
      ttlLeftMs: view.ttlLeftMs,
      clock: view.clock,
    };
    entry.count++;
    seen.set(view.holder.owner, entry);
  }
  const best = [...seen.values()].sort((a, b) => b.count - a.count)[0];
  if (state && MODES[state.mode.kind].manyHolders && state.holders.length > 0) {
    // The holder whose lease ends first: its slot is the next to come free. But while release --force
    // keeps the key closed, the closed hold whose lease ends last: nobody enters before it ends.
    const closed = state.holders.filter(isClosed);
    const first = closed.length
      ? [...closed].sort((a, b) => (b.ttlLeftMs ?? Infinity) - (a.ttlLeftMs ?? Infinity))[0]
      : [...state.holders].sort((a, b) => (a.ttlLeftMs ?? Infinity) - (b.ttlLeftMs ?? Infinity))[0];
    return {
      holder: first,
      ttlLeftMs: first.ttlLeftMs,
      clock: members.find((view) => view.clock)?.clock ?? clockAt(Date.now()),
      others: { count: state.holders.length, mode: state.mode },
      waiting: state.lineLength,
    };
  }
  return (
    best && {
      holder: best.holder,
      ttlLeftMs: best.ttlLeftMs,
      clock: best.clock ?? clockAt(Date.now()),
      ...(state ? { waiting: state.lineLength } : {}),
    }
  );
}
