// Numbers the Lua scripts are built with (scripts.ts defines them once in the Lua) that the
// layers above use too: they import them from here, not from the module that holds the Lua.

/** The history stream's cap (XADD MAXLEN; scripts.ts HISTORY), and so the most `dlock history --count` shows. */
export const HISTORY_MAX = 1000;

/**
 * A place lease further ahead than this is not a waiter's (each asks for a few seconds, line.ts
 * PLACE_LEASE_MS): forged, it would hold the line up until then. Dropped when the line is pruned.
 */
export const PLACE_LEASE_LIMIT_MS = 60_000;

/**
 * The most an inspect reply carries (lua/inspect.lua: its strings, and 16 bytes of framing each):
 * half of what the client reads in one reply (redis/reply-guard.ts), far more than any lock dlock
 * writes. A lock holding more (forged) is refused alone, instead of a reply that would close the
 * connection and fail every other read on it.
 */
export const INSPECT_MAX_BYTES = 4 * 1024 * 1024;
