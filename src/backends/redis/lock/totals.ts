// Read a key's totals (lua/totals.lua): its counts for all time, added to by the scripts that do
// each counted thing. Read with HMGET of the fields dlock writes, so a forged hash of any size
// costs one bounded reply; a field that is not a whole number in range (forged) is unknown:
// undefined, and listed in `invalid` (never 0, which would make a counter fall).

import type { Instance } from '../client/client.js';
import { withTimeout } from '../../../clock.js';
import { parseCount } from '../../../untrusted.js';
import { isWrongValue, wrongValueError } from './foreign.js';
import type { LockKeys } from './keys.js';
import { HOLD_BUCKETS_MS, WAIT_BUCKETS_MS } from './limits.js';
import {
  EXIT_CLASSES,
  LOSS_REASONS,
  TURNED_AWAY_REASONS,
  type Count,
  type Observed,
  type Totals,
} from '../../../backend/totals.js';

/** The largest count read: 2^53 − 1 (a forged larger one is invalid). */
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
  const invalid: Totals['invalid'] = [];
  // An absent field counted nothing yet (0); a present one that is not a whole number is unknown.
  const count = (field: string, min = 0): Count => {
    const value = values.get(field);
    if (typeof value !== 'string') return 0;
    const parsed = parseCount(value, min, MAX_COUNT);
    if (parsed === undefined) invalid.push({ field, value });
    return parsed;
  };
  const each = <T extends string>(prefix: string, names: readonly T[]) =>
    Object.fromEntries(names.map((name) => [name, count(`${prefix}:${name}`)])) as Record<T, Count>;
  const observed = (name: string, buckets: number[]): Observed | undefined => {
    const counts = [count(`${name}:count`), count(`${name}:sum_ms`), ...buckets.map((b) => count(`${name}:le:${b}`))];
    if (counts.some((value) => value === undefined)) return undefined;
    const [total, sumMs, ...inBuckets] = counts as number[];
    return { count: total!, sumMs: sumMs!, buckets: buckets.map((bound, i) => [bound, inBuckets[i]!]) };
  };
  const last = values.get('last_success_ms');
  return {
    acquisitions: count('acquired'),
    forced: count('forced'),
    turnedAway: each('turned_away', TURNED_AWAY_REASONS),
    losses: each('lost', LOSS_REASONS),
    releases: each('released', EXIT_CLASSES),
    wait: observed('wait', WAIT_BUCKETS_MS),
    hold: observed('hold', HOLD_BUCKETS_MS),
    lastSuccessMs: typeof last === 'string' ? count('last_success_ms', 1) : undefined,
    invalid,
  };
}
