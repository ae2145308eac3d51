// What dlock metrics reads from a key's history (LockHandle.history: typed events), in one pass:
// how many entries it keeps, since when, and its last success (for a key whose totals began after
// that success: written by an older dlock). The counts are not taken from here: the history keeps
// the last 1000 events only, the totals count them all (the Redis backend: lock/lua/totals.lua).
// Every event is data anyone who can write to the store could forge (the backend checked its fields).

import type { HistoryEvent } from '../backend/index.js';

export interface HistoryStats {
  entries: number;
  /** Server time (ms) of the oldest entry that has one (a forged ID may hold no date). */
  oldestMs: number | undefined;
  /** Server time (ms) of the newest `released` with exit status 0. */
  lastSuccessMs: number | undefined;
}

/** What `events` (newest first, as LockHandle.history returns them) say. */
export function historyStats(events: HistoryEvent[]): HistoryStats {
  const stats: HistoryStats = { entries: events.length, oldestMs: undefined, lastSuccessMs: undefined };
  for (const event of events) {
    const ms = event.atMs;
    if (ms === undefined) continue;
    if (stats.oldestMs === undefined || ms < stats.oldestMs) stats.oldestMs = ms;
    const success = event.event === 'released' && event.exit === 0;
    if (success && (stats.lastSuccessMs === undefined || ms > stats.lastSuccessMs)) stats.lastSuccessMs = ms;
  }
  return stats;
}
