// The Redlock quorum arithmetic, as pure functions (docs/operations/deployments.md); lease timing is in timing.ts.

/** Instances that must agree: floor(N/2)+1. */
export function quorumSize(instances: number): number {
  return Math.floor(instances / 2) + 1;
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
