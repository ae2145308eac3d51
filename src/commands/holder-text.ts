// One line about who holds a lock, for the spinner, the busy message and release --force.

import { formatDuration } from '../duration.js';
import type { Holder } from '../lock/holder.js';
import type { LockSet } from '../redlock/lockset.js';
import { inspectAll } from './instance-views.js';

export function describeHolder(holder: Holder, pttlMs?: number, nowMs: number = Date.now()): string {
  const parts = [`held by ${holder.host || 'unknown host'} pid ${holder.pid || '?'}`];
  if (holder.sinceMs) parts.push(`for ${formatDuration(nowMs - holder.sinceMs)}`);
  if (holder.fence) parts.push(`fence ${holder.fence}`);
  if (pttlMs !== undefined && pttlMs >= 0) parts.push(`expires in ${formatDuration(pttlMs)}`);
  return parts.join(', ');
}

/** The holder seen on the most instances (a majority's, in Redlock mode); undefined if none. */
export async function currentHolder(set: LockSet): Promise<string | undefined> {
  const views = await inspectAll(set, set.keys, []);
  const seen = new Map<string, { count: number; holder: Holder; pttlMs?: number }>();
  for (const view of views) {
    if (!view.holder) continue;
    const entry = seen.get(view.holder.owner) ?? { count: 0, holder: view.holder, pttlMs: view.ttl_ms };
    entry.count++;
    seen.set(view.holder.owner, entry);
  }
  const best = [...seen.values()].sort((a, b) => b.count - a.count)[0];
  return best ? describeHolder(best.holder, best.pttlMs) : undefined;
}
