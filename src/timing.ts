// Lease timing, as pure functions: drift, validity, deadlines, scheduling margins and request
// timeouts (docs/operations/deployments.md, docs/guarantees.md). child/, hold/ and doctor/ use
// these without touching the lock engine.

/** Allowance for clock drift between processes: ttl*0.01 + 2ms, rounded up (never less margin). */
export function driftMs(ttlMs: number): number {
  return Math.ceil(ttlMs / 100) + 2;
}

/** How long a lock taken at `startedAt` (monotonic ms) stays valid for us, as of `now`. */
export function validityMs(ttlMs: number, startedAt: number, now: number): number {
  return ttlMs - (now - startedAt) - driftMs(ttlMs);
}

/** The monotonic time at which our hold ends unless renewed: start of the last success + ttl - drift. */
export function localDeadline(ttlMs: number, startedAt: number): number {
  return startedAt + ttlMs - driftMs(ttlMs);
}

/**
 * Scheduling margin of the deadline: dlock's SIGKILL timer may fire late on a loaded machine
 * (bench/timer-lateness.mjs on 2 shared cores with 2-8 busy processes: p99 62-145 ms, the worst
 * timer 165-244 ms, once a 1.2 s freeze; docs/guarantees.md), and the drift margin alone
 * (ttl*1% + 2ms) is too small to absorb that. A tenth of the TTL, at most 200 ms.
 */
export function schedulingMarginMs(ttlMs: number): number {
  return Math.min(SCHEDULING_MARGIN_CAP_MS, Math.floor(ttlMs / 10));
}

export const SCHEDULING_MARGIN_CAP_MS = 200;

/** When the child must be gone: the local deadline less the scheduling margin (SIGKILL is sent then). */
export function killDeadline(ttlMs: number, startedAt: number): number {
  return localDeadline(ttlMs, startedAt) - schedulingMarginMs(ttlMs);
}

/**
 * Timeout of one renewal request: --connect-timeout, but not much past the moment the lease
 * gives up (`leftMs` from now), since an answer after that is of no use; at least a small floor.
 * A few milliseconds past it, not at it: a renewal that hangs is then still in flight when the
 * lease's own deadline fires, which says so ("no quorum answered the renewal sent …"); two
 * timers due in the same millisecond could otherwise end the renewal first, as an ordinary
 * failure to retry. Sized from the time left rather than from the TTL alone, so a slow link
 * (100 ms round trips at a 1s TTL) still renews.
 */
export function renewTimeoutMs(connectTimeoutMs: number, leftMs: number): number {
  return Math.max(RENEW_TIMEOUT_FLOOR_MS, Math.floor(Math.min(connectTimeoutMs, leftMs + RENEW_PAST_GIVING_UP_MS)));
}

/** How long a renewal request outlives the moment the lease gives up (see renewTimeoutMs). */
export const RENEW_PAST_GIVING_UP_MS = 5;

export const RENEW_TIMEOUT_FLOOR_MS = 10;

/**
 * Per-instance timeout for acquire and extend: the --connect-timeout bound, and in Redlock
 * mode also small next to the TTL (a tenth), so one slow instance cannot eat the validity.
 */
export function instanceTimeoutMs(connectTimeoutMs: number, ttlMs: number, instances: number): number {
  const share = instances > 1 ? ttlMs / 10 : ttlMs / 3;
  return Math.max(1, Math.floor(Math.min(connectTimeoutMs, share)));
}
