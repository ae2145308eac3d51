// The spinner's "turn in about …" (pure): median hold × holds ahead, less the current hold so far.

import { expect, test } from 'vitest';
import { turnEstimateMs } from '../../src/hold/turn-estimate.js';

test.each<[string, number[], number | undefined, number, number | undefined, number | undefined]>([
  ['no history', [], 1, 1, 0, undefined],
  ['no place (Redlock, or -n)', [1000], undefined, 1, 0, undefined],
  ['next in line, holder just started', [10_000, 20_000, 30_000], 1, 1, 0, 20_000],
  ['next in line, holder 5s in', [10_000, 20_000, 30_000], 1, 1, 5_000, 15_000],
  ['third in line', [10_000, 20_000, 30_000], 3, 1, 5_000, 55_000],
  ['median of an even count', [10_000, 20_000], 1, 1, 0, 15_000],
  ['a holder past the median: never negative', [10_000], 1, 1, 60_000, 0],
  ['--slots 2: the 3rd waits for two rounds', [10_000], 3, 2, 0, 20_000],
])('%s', (_, held, place, slots, soFar, expected) => {
  expect(turnEstimateMs(held, place, slots, soFar)).toBe(expected);
});
