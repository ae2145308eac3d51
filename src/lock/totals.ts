// Read a key's totals (lua/totals.lua): its counts for all time, added to by the scripts that do
// each counted thing. Read with HMGET of the fields dlock writes, so a forged hash of any size
// costs one bounded reply; a field that is not a whole number in range reads as 0 (or absent).

import type { Instance } from '../redis/client.js';
import { withTimeout } from '../clock.js';
import { parseCount } from '../untrusted.js';
import { isWrongValue, wrongValueError } from './foreign.js';
import type { LockKeys } from './keys.js';
import { HOLD_BUCKETS_MS, WAIT_BUCKETS_MS } from './limits.js';

export const TURNED_AWAY_REASONS = ['held', 'line', 'wait', 'done', 'other'] as const;
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

export interface Totals {
  acquisitions: number;
  forced: number;
  turnedAway: Record<TurnedAwayReason, number>;
  losses: Record<LossReason, number>;
  releases: Record<ExitClass, number>;
  wait: Observed;
  hold: Observed;
  /** Server time (ms) of the last release with exit status 0; undefined if none was counted. */
  lastSuccessMs: number | undefined;
}

/** The largest count read: 2^53 − 1 (a forged larger one reads as 0). */
const MAX_COUNT = Number.MAX_SAFE_INTEGER;

const FIELDS = [
  'acquired',
  'forced',
  ...TURNED_AWAY_REASONS.map((reason) => `turned_away:${reason}`),
  ...LOSS_REASONS.map((reason) => `lost:${reason}`),
  ...EXIT_CLASSES.map((exitClass) => `released:${exitClass}`),
  ...observedFields('wait', WAIT_BUCKETS_MS),
  ...observedFields('hold', HOLD_BUCKETS_MS),
  'last_success_ms',
];

function observedFields(name: string, buckets: number[]): string[] {
  return [`${name}:count`, `${name}:sum_ms`, ...buckets.map((bound) => `${name}:le:${bound}`)];
}

/** The key's totals (all zero for a key nothing was counted for yet). */
export async function readTotals(instance: Instance, keys: LockKeys, timeoutMs: number): Promise<Totals> {
  const read = instance.client.call('HMGET', keys.totals, ...FIELDS).catch(async (error: unknown) => {
    throw isWrongValue(error) ? await wrongValueError(instance.client, [keys.totals], error) : error;
  });
  const reply = await withTimeout(read, timeoutMs);
  if (!Array.isArray(reply) || reply.length !== FIELDS.length) throw new Error('HMGET: an unexpected reply');
  const values = new Map(FIELDS.map((field, i) => [field, reply[i]]));
  const count = (field: string) => {
    const value = values.get(field);
    return (typeof value === 'string' ? parseCount(value, 0, MAX_COUNT) : undefined) ?? 0;
  };
  const each = <T extends string>(prefix: string, names: readonly T[]) =>
    Object.fromEntries(names.map((name) => [name, count(`${prefix}:${name}`)])) as Record<T, number>;
  const observed = (name: string, buckets: number[]): Observed => ({
    count: count(`${name}:count`),
    sumMs: count(`${name}:sum_ms`),
    buckets: buckets.map((bound) => [bound, count(`${name}:le:${bound}`)]),
  });
  const last = values.get('last_success_ms');
  return {
    acquisitions: count('acquired'),
    forced: count('forced'),
    turnedAway: each('turned_away', TURNED_AWAY_REASONS),
    losses: each('lost', LOSS_REASONS),
    releases: each('released', EXIT_CLASSES),
    wait: observed('wait', WAIT_BUCKETS_MS),
    hold: observed('hold', HOLD_BUCKETS_MS),
    lastSuccessMs: typeof last === 'string' ? parseCount(last, 1, MAX_COUNT) : undefined,
  };
}
