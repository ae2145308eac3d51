// The holder kinds table (src/backends/redis/lock/mode.ts), pure: what a nested dlock may ask under each kind of
// hold and why not, and how each kind is described (table tests, no server).

import { describe, expect, test } from 'vitest';
import { isHolderKind, MODES, nestedRefusal, slotsOf, type HoldMode } from '../../src/backend/mode.js';

const alone: HoldMode = { kind: 'exclusive' };
const shared: HoldMode = { kind: 'shared' };
const three: HoldMode = { kind: 'slots', slots: 3 };
const four: HoldMode = { kind: 'slots', slots: 4 };

describe("a nested dlock under its parent's hold", () => {
  test.each<[HoldMode, HoldMode, string | undefined]>([
    [alone, alone, undefined],
    [alone, shared, undefined],
    [alone, three, 'would have no slot of its own'],
    [shared, shared, undefined],
    [shared, alone, 'would run beside the other readers'],
    [shared, three, 'would have no slot of its own'],
    [three, three, undefined],
    [three, alone, 'would run beside the holders of the other slots'],
    [three, shared, 'would run beside the holders of the other slots, which are not readers'],
    [three, four, 'would count 4 slots where the key has 3'],
  ])('held %j, asked %j: %s', (held, asked, why) => {
    expect(nestedRefusal(held, asked)).toBe(why);
  });
});

describe('the table', () => {
  test('how status and the spinner describe the holders', () => {
    expect(MODES.shared.heldBy(slotsOf(shared), 1)).toBe('held by 1 shared holder (--shared)');
    expect(MODES.shared.taken(slotsOf(shared), 2)).toBe('held by 2 shared holders');
    expect(MODES.slots.heldBy(slotsOf(three), 2)).toBe('held, 2 of 3 slots taken (--slots 3)');
    expect(MODES.slots.taken(slotsOf(three), 1)).toBe('1 of 3 slots taken');
  });

  test('a holder of each kind', () => {
    expect([MODES.exclusive, MODES.shared, MODES.slots].map((row) => row.holderSuffix(2))).toEqual([
      '',
      ' (shared)',
      ' in slot 2',
    ]);
    expect(MODES.slots.holderFields(undefined)).toEqual({});
    expect(MODES.shared.holderFields(undefined)).toEqual({ shared: true });
  });

  test('a kind read from Redis is one of the three, never an inherited name', () => {
    expect(['exclusive', 'shared', 'slots'].every(isHolderKind)).toBe(true);
    expect(['slot', 'toString', '__proto__', '', undefined, 3].some(isHolderKind)).toBe(false);
  });

  test("the mode's number", () => {
    expect([alone, shared, three].map(slotsOf)).toEqual([1, 1, 3]);
    expect(MODES.slots.mode(5)).toEqual({ kind: 'slots', slots: 5 });
    expect(MODES.shared.mode(5)).toEqual({ kind: 'shared' });
  });
});
