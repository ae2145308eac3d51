// A key's counts for all time, as a backend keeps them (dlock metrics' counters): acquisitions,
// turn-aways, losses and releases by reason, and the wait and hold times in buckets. A count that
// is not a whole number (forged) is unknown, never 0, which would make a counter fall.

export const TURNED_AWAY_REASONS = ['held', 'line', 'wait', 'done', 'superseded', 'other'] as const;
export const LOSS_REASONS = ['expired', 'forced', 'taken', 'other'] as const;
export const EXIT_CLASSES = ['ok', 'error', 'cannot_run', 'signal', 'lost', 'unknown', 'none', 'other'] as const;

export type TurnedAwayReason = (typeof TURNED_AWAY_REASONS)[number];
export type LossReason = (typeof LOSS_REASONS)[number];
export type ExitClass = (typeof EXIT_CLASSES)[number];

/** Observations counted into buckets: how many fit in each bound (cumulative, as Prometheus' `le`). */
export interface Observed {
  count: number;
  sumMs: number;
  /** Bound in ms → how many observations were at most it. */
  buckets: [number, number][];
}

/** A count, or undefined when its field holds something else than a whole number (forged). */
export type Count = number | undefined;

export interface Totals {
  acquisitions: Count;
  forced: Count;
  turnedAway: Record<TurnedAwayReason, Count>;
  losses: Record<LossReason, Count>;
  releases: Record<ExitClass, Count>;
  /** undefined when any of its fields is not a whole number. */
  wait: Observed | undefined;
  hold: Observed | undefined;
  /** Server time (ms) of the last release with exit status 0; undefined if none was counted (or forged). */
  lastSuccessMs: number | undefined;
  /** The fields that hold something else than a whole number in range, as read (untrusted). */
  invalid: { field: string; value: string }[];
}
