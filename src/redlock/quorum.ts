// The Redlock arithmetic, as pure functions (SPEC "Redlock").

/** Instances that must agree: floor(N/2)+1. */
export function quorumSize(instances: number): number {
  return Math.floor(instances / 2) + 1;
}

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

export type Outcome = 'yes' | 'no' | 'error';

/**
 * Decide a fan-out round from its per-instance outcomes:
 * won (a quorum said yes), lost (a quorum said no, so the answer is known), or
 * unavailable (errors leave too few instances to ever reach a quorum), else undecided.
 */
export function tally(outcomes: Outcome[], total: number): 'won' | 'refused' | 'unavailable' | 'undecided' {
  const quorum = quorumSize(total);
  const yes = outcomes.filter((o) => o === 'yes').length;
  const no = outcomes.filter((o) => o === 'no').length;
  const errors = outcomes.filter((o) => o === 'error').length + (total - outcomes.length);
  if (yes >= quorum) return 'won';
  if (total - errors < quorum) return 'unavailable';
  if (no > total - quorum) return 'refused';
  return 'undecided';
}

/**
 * Per-instance timeout for acquire and extend: the --connect-timeout bound, and in Redlock
 * mode also small next to the TTL (a tenth), so one slow instance cannot eat the validity.
 */
export function instanceTimeoutMs(connectTimeoutMs: number, ttlMs: number, instances: number): number {
  const share = instances > 1 ? ttlMs / 10 : ttlMs / 3;
  return Math.max(1, Math.floor(Math.min(connectTimeoutMs, share)));
}
