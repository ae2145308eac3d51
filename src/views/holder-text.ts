// One line about who holds a lock, for the spinner, the busy message and release --force.
// The holder's fields are untrusted: each is escaped here, as it goes into the line.

import { formatDuration } from '../duration.js';
import type { HeldMode, Holder } from '../lock/holder.js';
import { MODES, slotsOf } from '../lock/mode.js';
import type { InstanceFailure, LockSet } from '../lockset/lockset.js';
import { printable } from '../untrusted.js';
import { deadPidText } from './dead-pid.js';
import { inspectAll, type InstanceView } from '../lockset/inspect.js';

export function describeHolder(holder: Holder, pttlMs?: number, nowMs: number = Date.now()): string {
  const how = MODES[holder.kind].holderSuffix(holder.slot);
  const who = `${printable(holder.host) || 'unknown host'} pid ${printable(holder.pid) || '?'}${how}`;
  const parts = [holder.forcedMs ? `closed by release --force (was held by ${who})` : `held by ${who}`];
  if (holder.sinceMs !== undefined) parts.push(`for ${formatDuration(nowMs - holder.sinceMs)}`);
  if (holder.fence) parts.push(`fence ${printable(holder.fence)}`);
  const dead = deadPidText(holder, pttlMs);
  if (pttlMs !== undefined && pttlMs >= 0 && !dead) parts.push(`expires in ${formatDuration(pttlMs)}`);
  return dead ? `${parts.join(', ')}; ${dead}` : parts.join(', ');
}

export interface HolderSnapshot {
  holder: Holder;
  pttlMs?: number;
  /** Date.now() when it was read, to age the TTL left when shown later. */
  readAt: number;
  /** --slots/--shared: how many hold (the holder shown is the one whose lease ends first), and the mode. */
  others?: { count: number; mode: HeldMode };
  /** How many wait in line. */
  waiting?: number;
}

/**
 * The holder seen on the most instances (a majority's, in Redlock mode); undefined if none.
 * `refused`: instances that refused to be read for good (a missing grant, such as +hgetall):
 * the caller reports those (69), never the lock as merely busy.
 */
export async function holderSnapshot(set: LockSet): Promise<{ snapshot?: HolderSnapshot; refused: InstanceFailure[] }> {
  const views = await inspectAll(set, set.keys, []);
  const refused = views.flatMap(({ failure }) => (failure?.permanent ? [failure] : []));
  return { snapshot: snapshotOf(set, views), refused };
}

/** The snapshot from every instance's view. */
function snapshotOf(set: LockSet, views: InstanceView[]): HolderSnapshot | undefined {
  const seen = new Map<string, { count: number; holder: Holder; pttlMs?: number }>();
  for (const view of views) {
    if (!view.holder) continue;
    const entry = seen.get(view.holder.owner) ?? { count: 0, holder: view.holder, pttlMs: view.ttl_ms };
    entry.count++;
    seen.set(view.holder.owner, entry);
  }
  const best = [...seen.values()].sort((a, b) => b.count - a.count)[0];
  const state = set.total === 1 ? views[0]?.state : undefined;
  if (state && state.mode.kind !== 'exclusive' && state.holders.length > 0) {
    // The holder whose lease ends first: its slot is the next to come free.
    const first = [...state.holders].sort((a, b) => (a.ttlLeftMs ?? Infinity) - (b.ttlLeftMs ?? Infinity))[0];
    return {
      holder: first,
      pttlMs: first.ttlLeftMs,
      readAt: Date.now(),
      others: { count: state.holders.length, mode: state.mode },
      waiting: state.lineLength,
    };
  }
  return (
    best && {
      holder: best.holder,
      pttlMs: best.pttlMs,
      readAt: Date.now(),
      ...(state ? { waiting: state.lineLength } : {}),
    }
  );
}

/** A snapshot as one line, aged to `nowMs`. */
export function describeSnapshot(snapshot: HolderSnapshot, nowMs: number = Date.now()): string {
  const pttl =
    snapshot.pttlMs === undefined || snapshot.pttlMs < 0
      ? snapshot.pttlMs
      : Math.max(0, snapshot.pttlMs - (nowMs - snapshot.readAt));
  const waiting = snapshot.waiting ? `; ${snapshot.waiting} waiting` : '';
  const { others } = snapshot;
  if (!others) return `${describeHolder(snapshot.holder, pttl, nowMs)}${waiting}`;
  const what = MODES[others.mode.kind].taken(slotsOf(others.mode), others.count);
  return (
    `${what}, the next lease ends in ${pttl === undefined ? 'unknown' : formatDuration(pttl)} ` +
    `(${describeHolder(snapshot.holder, undefined, nowMs)})${waiting}`
  );
}
