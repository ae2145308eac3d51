// About how long until a waiter's turn comes, from the key's recent hold times (its history)
// and the place in line: the median hold × the holds ahead, less what the current holder has
// already held. An estimate for the spinner, never a promise.

import { recentHistory, type LockSet } from '../lockset/index.js';
import { parseCount } from '../untrusted.js';

/** How many recent entries are read, once, when a wait starts. */
export const RECENT_ENTRIES = 20;

/** The hold times (ms) of the recent releases, newest first; [] without history or on any error. */
export async function recentHoldTimes(set: LockSet): Promise<number[]> {
  const entries = await recentHistory(set, RECENT_ENTRIES);
  return entries.flatMap((entry) => {
    const held = entry.event === 'released' ? parseCount(entry.fields.held_ms, 0, 8.64e15) : undefined;
    return held === undefined ? [] : [held];
  });
}

/**
 * ms until the turn of the waiter at `place` (1 = next), with `slots` holders at once: each
 * hold ahead lasts the median of `heldMs`; the current one has run `holderSoFarMs`. Undefined
 * without hold times or a place.
 */
export function turnEstimateMs(
  heldMs: number[],
  place: number | undefined,
  slots: number,
  holderSoFarMs: number | undefined,
): number | undefined {
  if (heldMs.length === 0 || !place) return undefined;
  const sorted = [...heldMs].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
  const holdsAhead = Math.ceil(place / Math.max(1, slots));
  return Math.max(0, Math.round(median * holdsAhead - Math.min(holderSoFarMs ?? 0, median)));
}
