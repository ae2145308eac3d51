// A key's history (src/lock/scripts.ts HISTORY) folded into counts and observations, in one pass.
// Every field is data anyone who can write to Redis could forge: a reason or status outside the
// few dlock writes counts as "other" (the label sets stay a closed list), and a time that is not
// a whole number of ms within range is not observed (never NaN, never negative).

import type { HistoryEntry } from '../lockset/index.js';
import { parseCount } from '../untrusted.js';

/** The longest wait or hold observed: 100 days in ms; a larger value is counted as unknown. */
const MAX_OBSERVED_MS = 100 * 86_400_000;

export const TURNED_AWAY_REASONS = ['held', 'line', 'wait', 'done', 'other'] as const;
export const LOSS_REASONS = ['expired', 'forced', 'taken', 'other'] as const;
export const EXIT_CLASSES = ['ok', 'error', 'cannot_run', 'signal', 'lost', 'unknown', 'none', 'other'] as const;

export type TurnedAwayReason = (typeof TURNED_AWAY_REASONS)[number];
export type LossReason = (typeof LOSS_REASONS)[number];
export type ExitClass = (typeof EXIT_CLASSES)[number];

export interface HistoryStats {
  entries: number;
  /** Server time (ms) of the oldest entry that has one (a forged ID may hold no date). */
  oldestMs: number | undefined;
  /** Server time (ms) of the newest `released` with exit status 0. */
  lastSuccessMs: number | undefined;
  acquisitions: number;
  forced: number;
  turnedAway: Record<TurnedAwayReason, number>;
  losses: Record<LossReason, number>;
  releases: Record<ExitClass, number>;
  /** Seconds waited before each acquisition, and held before each release, as recorded. */
  waitSeconds: number[];
  holdSeconds: number[];
}

/** The counts of `entries` (newest first, as readHistory returns them). */
export function historyStats(entries: HistoryEntry[]): HistoryStats {
  const stats: HistoryStats = {
    entries: entries.length,
    oldestMs: undefined,
    lastSuccessMs: undefined,
    acquisitions: 0,
    forced: 0,
    turnedAway: zeros(TURNED_AWAY_REASONS),
    losses: zeros(LOSS_REASONS),
    releases: zeros(EXIT_CLASSES),
    waitSeconds: [],
    holdSeconds: [],
  };
  for (const { event, fields, ms } of entries) {
    if (ms !== undefined && (stats.oldestMs === undefined || ms < stats.oldestMs)) stats.oldestMs = ms;
    switch (event) {
      case 'acquired':
        stats.acquisitions++;
        observe(stats.waitSeconds, fields.waited_ms);
        break;
      case 'released': {
        const exitClass = classifyExit(fields.exit);
        stats.releases[exitClass]++;
        observe(stats.holdSeconds, fields.held_ms);
        if (exitClass === 'ok' && ms !== undefined && (stats.lastSuccessMs === undefined || ms > stats.lastSuccessMs))
          stats.lastSuccessMs = ms;
        break;
      }
      case 'busy':
        stats.turnedAway[oneOf(fields.why, ['held', 'line', 'wait'] as const)]++;
        break;
      case 'done':
        stats.turnedAway.done++;
        break;
      case 'lost':
        stats.losses[oneOf(fields.why, ['expired', 'forced', 'taken'] as const)]++;
        break;
      case 'forced':
        stats.forced++;
        break;
    }
  }
  return stats;
}

/**
 * What a recorded exit status says: ok (0), error (1–125), cannot_run (126, 127: not
 * executable, not found), signal (128+N), lost (the lock was lost), unknown (a section ended
 * without `dlock release --exit-status`), none (no command ran).
 */
export function classifyExit(exit: string | undefined): ExitClass {
  if (exit === undefined || exit === '') return 'none';
  if (exit === 'lost') return 'lost';
  if (exit === 'unknown') return 'unknown';
  const code = parseCount(exit, 0, 255);
  if (code === undefined) return 'other';
  return code === 0 ? 'ok' : code <= 125 ? 'error' : code <= 127 ? 'cannot_run' : 'signal';
}

function observe(into: number[], ms: string | undefined): void {
  const value = parseCount(ms, 0, MAX_OBSERVED_MS);
  if (value !== undefined) into.push(value / 1000);
}

function oneOf<T extends string>(value: string | undefined, known: readonly T[]): T | 'other' {
  return (known as readonly string[]).includes(value ?? '') ? (value as T) : 'other';
}

function zeros<T extends string>(names: readonly T[]): Record<T, number> {
  return Object.fromEntries(names.map((name) => [name, 0])) as Record<T, number>;
}
