// One line about who holds a lock, for the spinner, the busy message and release --force.

import { formatDuration } from '../duration.js';
import type { Holder } from '../lock/holder.js';
import { inspectOn } from '../lock/inspect.js';
import type { LockSet } from '../redlock/lockset.js';

export function describeHolder(holder: Holder, pttlMs?: number, nowMs: number = Date.now()): string {
  const parts = [`held by ${holder.host || 'unknown host'} pid ${holder.pid || '?'}`];
  if (holder.sinceMs) parts.push(`for ${formatDuration(nowMs - holder.sinceMs)}`);
  if (holder.fence) parts.push(`fence ${holder.fence}`);
  if (pttlMs !== undefined && pttlMs >= 0) parts.push(`expires in ${formatDuration(pttlMs)}`);
  return parts.join(', ');
}

/** The holder as the first instance that knows one reports it; undefined if none does. */
export async function currentHolder(set: LockSet): Promise<string | undefined> {
  for (const instance of set.instances) {
    try {
      const state = await inspectOn(instance, set.keys, set.timeoutMs);
      if (state.holder) return describeHolder(state.holder, state.pttlMs);
    } catch {
      // Try the next instance; this is only for display.
    }
  }
  return undefined;
}
