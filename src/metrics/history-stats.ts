// What dlock metrics reads from a key's history stream (src/backends/redis/lock/scripts.ts HISTORY), in one pass:
// how many entries it keeps, since when, and its last success (for a key whose totals began after
// that success: written by an older dlock). The counts are not taken from here: the stream keeps
// the last 1000 events only, the totals hash counts them all (src/backends/redis/lock/lua/totals.lua).
// Every field is data anyone who can write to Redis could forge.

import type { HistoryEntry } from '../backend/index.js';

export interface HistoryStats {
  entries: number;
  /** Server time (ms) of the oldest entry that has one (a forged ID may hold no date). */
  oldestMs: number | undefined;
  /** Server time (ms) of the newest `released` with exit status 0. */
  lastSuccessMs: number | undefined;
}

/** What `entries` (newest first, as readHistory returns them) say. */
export function historyStats(entries: HistoryEntry[]): HistoryStats {
  const stats: HistoryStats = { entries: entries.length, oldestMs: undefined, lastSuccessMs: undefined };
  for (const { event, fields, ms } of entries) {
    if (ms === undefined) continue;
    if (stats.oldestMs === undefined || ms < stats.oldestMs) stats.oldestMs = ms;
    if (event === 'released' && fields.exit === '0' && (stats.lastSuccessMs === undefined || ms > stats.lastSuccessMs))
      stats.lastSuccessMs = ms;
  }
  return stats;
}
