// One line about who holds a lock, for the spinner, the busy message and release --force.
// The holder's fields are untrusted: each is escaped here, as it goes into the line.

import { formatDuration } from '../duration.js';
import type { Holder } from '../lock/holder.js';
import type { LockSet } from '../lockset/lockset.js';
import { printable } from '../untrusted.js';
import { deadPidText } from './dead-pid.js';
import { inspectAll } from './instance-views.js';

export function describeHolder(holder: Holder, pttlMs?: number, nowMs: number = Date.now()): string {
  const who = `${printable(holder.host) || 'unknown host'} pid ${printable(holder.pid) || '?'}`;
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
}

/** The holder seen on the most instances (a majority's, in Redlock mode); undefined if none. */
export async function holderSnapshot(set: LockSet): Promise<HolderSnapshot | undefined> {
  const views = await inspectAll(set, set.keys, []);
  const seen = new Map<string, { count: number; holder: Holder; pttlMs?: number }>();
  for (const view of views) {
    if (!view.holder) continue;
    const entry = seen.get(view.holder.owner) ?? { count: 0, holder: view.holder, pttlMs: view.ttl_ms };
    entry.count++;
    seen.set(view.holder.owner, entry);
  }
  const best = [...seen.values()].sort((a, b) => b.count - a.count)[0];
  return best && { holder: best.holder, pttlMs: best.pttlMs, readAt: Date.now() };
}

/** A snapshot as one line, aged to `nowMs`. */
export function describeSnapshot(snapshot: HolderSnapshot, nowMs: number = Date.now()): string {
  const pttl = snapshot.pttlMs === undefined || snapshot.pttlMs < 0 ? snapshot.pttlMs : Math.max(0, snapshot.pttlMs - (nowMs - snapshot.readAt));
  return describeHolder(snapshot.holder, pttl, nowMs);
}
