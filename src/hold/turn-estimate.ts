// About how long until a waiter's turn comes, from the key's recent hold times (its history),
// the place in line and the holder in front: the median hold × the holds ahead, less what the
// current holder has already held; its lease when only that can end it; "unknown" once it has
// held past the median. An estimate for the spinner and status lines, never a promise.

import { known, type LockHandle } from '../backend/index.js';

/** How many recent events are read, once, when a wait starts. */
export const RECENT_ENTRIES = 20;

/** The hold times (ms) of the recent releases, newest first; [] without history or on any error. */
export async function recentHoldTimes(lock: LockHandle): Promise<number[]> {
  const read = await lock.history(RECENT_ENTRIES).catch(() => undefined);
  const events = read && 'events' in read ? read.events : [];
  return events.flatMap((event) => {
    const held = event.event === 'released' ? known(event.heldMs) : undefined;
    return held === undefined ? [] : [held];
  });
}

/** How the current hold can end, which says what its lease's time left means. */
export interface CurrentHold {
  /**
   * command: a keeper renews it until its command ends (the lease says nothing of when);
   * release-or-lease: nothing renews it (--no-keeper): a release may end it, its lease ends it at the latest;
   * lease: nothing can end it before its lease does (its process is gone, or release --force closed it).
   */
  ends: 'command' | 'release-or-lease' | 'lease';
  /** How long it has been held; undefined when not known. */
  heldMs: number | undefined;
  /** Its lease's time left; undefined when not known, negative when it has no expiry. */
  leaseLeftMs: number | undefined;
}

/** ms until the turn; 'unknown' when no honest number can be given; undefined when there is nothing to go on. */
export type TurnEstimate = number | 'unknown' | undefined;

/**
 * ms until the turn of the waiter at `place` (1 = next), with `slots` holders at once: the
 * current hold's end, then each hold ahead the median of `heldMs`. The current hold ends in
 * the median less what it has held so far; once it has held the median or longer, that says
 * nothing ('unknown'), unless its lease bounds it: a --no-keeper hold ends with its lease at
 * the latest, a hold whose process is gone exactly then. Undefined without a place, or without
 * hold times when more than the current hold is ahead.
 */
export function turnEstimateMs(
  heldMs: number[],
  place: number | undefined,
  slots: number,
  current: CurrentHold,
): TurnEstimate {
  if (!place) return undefined;
  const holdsAhead = Math.ceil(place / Math.max(1, slots));
  const median = medianOf(heldMs);
  if (median === undefined && (holdsAhead > 1 || current.ends !== 'lease')) return undefined;
  const currentLeft = currentHoldLeft(current, median);
  if (currentLeft === undefined) return 'unknown';
  return Math.max(0, Math.round(currentLeft + (median ?? 0) * (holdsAhead - 1)));
}

/** The current hold's time left, or undefined when it cannot be told. */
function currentHoldLeft(current: CurrentHold, median: number | undefined): number | undefined {
  const lease = current.leaseLeftMs !== undefined && current.leaseLeftMs >= 0 ? current.leaseLeftMs : undefined;
  if (current.ends === 'lease') return lease;
  const byMedian =
    median !== undefined && current.heldMs !== undefined && current.heldMs < median
      ? median - current.heldMs
      : undefined;
  if (current.ends === 'command') return byMedian;
  return byMedian === undefined ? lease : lease === undefined ? byMedian : Math.min(byMedian, lease);
}

function medianOf(values: number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}
