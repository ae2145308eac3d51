// The spinner's "turn in about …" (pure): median hold × holds ahead, less the current hold so far;
// the current holder's lease when nothing but its end can end it; unknown when past the median.

import { expect, test } from 'vitest';
import { type CurrentHold, type TurnEstimate, turnEstimateMs } from '../../src/hold/turn-estimate.js';

const running = (heldMs: number | undefined, leaseLeftMs?: number): CurrentHold => ({
  ends: 'command',
  heldMs,
  leaseLeftMs,
});
test.each<[string, number[], number | undefined, number, CurrentHold, TurnEstimate]>([
  ['no history', [], 1, 1, running(0), undefined],
  ['no place (Redlock, or -n)', [1000], undefined, 1, running(0), undefined],
  ['next in line, holder just started', [10_000, 20_000, 30_000], 1, 1, running(0), 20_000],
  ['next in line, holder 5s in', [10_000, 20_000, 30_000], 1, 1, running(5_000), 15_000],
  ['third in line', [10_000, 20_000, 30_000], 3, 1, running(5_000), 55_000],
  ['median of an even count', [10_000, 20_000], 1, 1, running(0), 15_000],
  ['--slots 2: the 3rd waits for two rounds', [10_000], 3, 2, running(0), 20_000],
  ["a keeper's lease says nothing of when its command ends", [10_000], 1, 1, running(1_000, 500), 9_000],
  // Issue 31: these were "turn in about 1s".
  ['a holder past the median (600x): unknown, not the median', [10], 1, 1, running(6_000), 'unknown'],
  ['a holder exactly at the median: unknown', [10_000], 2, 1, running(10_000), 'unknown'],
  ['a holder whose hold time is not known: unknown', [10_000], 1, 1, running(undefined), 'unknown'],
  ['--no-keeper past the median: its lease left (nothing renews it)', [10], 1, 1, noKeeper(3_000, 59_000), 59_000],
  ['--no-keeper before the median: the median, at most its lease', [60_000], 1, 1, noKeeper(0, 59_000), 59_000],
  ['--no-keeper, 2nd in line', [10_000], 2, 1, noKeeper(0, 5_000), 15_000],
  ['--no-keeper with no expiry: unknown', [10], 1, 1, noKeeper(3_000, -1), 'unknown'],
  ['a dead holder: its lease left, whatever the history', [10_000], 1, 1, lease(1_000, 59_000), 59_000],
  ['a dead holder without history, next in line: its lease left', [], 1, 1, lease(1_000, 59_000), 59_000],
  ['a dead holder without history, 2nd in line: no estimate', [], 2, 1, lease(1_000, 59_000), undefined],
])('%s', (_, held, place, slots, current, expected) => {
  expect(turnEstimateMs(held, place, slots, current)).toBe(expected);
});

function noKeeper(heldMs: number, leaseLeftMs: number): CurrentHold {
  return { ends: 'release-or-lease', heldMs, leaseLeftMs };
}

function lease(heldMs: number, leaseLeftMs: number): CurrentHold {
  return { ends: 'lease', heldMs, leaseLeftMs };
}
