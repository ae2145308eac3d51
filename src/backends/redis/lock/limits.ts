// Numbers the Lua scripts are built with (scripts.ts defines them once in the Lua) that the
// layers above use too: they import them from here, not from the module that holds the Lua.

/**
 * A place lease further ahead than this is not a waiter's (each asks for a few seconds, line.ts
 * PLACE_LEASE_MS): forged, it would hold the line up until then. Dropped when the line is pruned.
 */
export const PLACE_LEASE_LIMIT_MS = 60_000;
/** The scores of one priority's band in the line (2^32 tickets: far more than ever wait at once). */
export const TICKET_SPAN = 2 ** 32;
/** The most waiters a script walks in one call (a run of --shared waiters entering together). */
export const LINE_SCAN_MAX = 10_000;
/** The most waiters a --supersede join looks at for older --supersede ones (one is ever in line; more are forged). */
export const SUPERSEDE_SCAN_MAX = 1000;

/**
 * The most an inspect reply carries (lua/inspect.lua: its strings, and 16 bytes of framing each):
 * half of what the client reads in one reply (redis/reply-guard.ts), far more than any lock dlock
 * writes. A lock holding more (forged) is refused alone, instead of a reply that would close the
 * connection and fail every other read on it.
 */
export const INSPECT_MAX_BYTES = 4 * 1024 * 1024;

/**
 * The histogram buckets the scripts count waits and holds into (lua/totals.lua, in ms; dlock
 * metrics' dlock_lock_wait_seconds and dlock_lock_hold_seconds, in seconds). Kept for the life of
 * a key's totals: a bucket changed here would start its series anew.
 */
export const WAIT_BUCKETS_MS = [10, 100, 1000, 5000, 30_000, 60_000, 300_000, 900_000, 3_600_000, 14_400_000];
export const HOLD_BUCKETS_MS = [
  1000, 5000, 30_000, 60_000, 300_000, 900_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000, 43_200_000, 86_400_000,
];
/** The longest wait or hold counted (100 days, in ms); a larger or malformed one is not observed. */
export const MAX_OBSERVED_MS = 100 * 86_400_000;

/**
 * How long a place in line lasts unless its waiter renews it (it does every third of this):
 * a waiter that dies leaves the line within it, and never blocks the ones behind it longer.
 */
export const PLACE_LEASE_MS = 5_000;
export const PLACE_RENEW_MS = Math.floor(PLACE_LEASE_MS / 3);

/** Longest sleep between polls even when the holder's TTL is longer (a lost message costs at most this). */
export const POLL_CAP_MS = 5_000;
