// Events' ts_ms (src/clock.ts epochMs): sub-millisecond, and never off the wall clock by a
// millisecond or more, whatever happened between the clock readings when dlock started.

import { expect, test } from 'vitest';
import { epochMs, longTimeout, MAX_TIMER_MS, now } from '../../src/clock.js';

test('every reading lies between Date.now() before it and Date.now() + 1 ms after it, and never goes back', async () => {
  let last = -Infinity;
  for (let i = 0; i < 2_000; i++) {
    const before = Date.now();
    const ts = epochMs();
    const after = Date.now();
    expect(ts).toBeGreaterThanOrEqual(before);
    expect(ts).toBeLessThan(after + 1);
    expect(ts).toBeGreaterThanOrEqual(last);
    last = ts;
    // Spread the readings over a few milliseconds, across ticks of Date.now().
    if (i % 200 === 0) await new Promise((resolve) => setTimeout(resolve, 1));
  }
});

// Node's setTimeout fires at once (1 ms, with a TimeoutOverflowWarning) for any delay over
// 2^31−1 ms; longTimeout splits such a delay into timers of at most that.
test('MAX_TIMER_MS is the longest delay setTimeout takes', () => {
  expect(MAX_TIMER_MS).toBe(2 ** 31 - 1);
});

test('a delay longer than one timer is run in chunks, and fires once, not before it is due', async () => {
  const started = now();
  const fired = await new Promise<number>((resolve) => {
    // Chunks of 20 ms for a 90 ms delay: five timers.
    longTimeout(() => resolve(now()), 90, 20);
  });
  expect(fired - started).toBeGreaterThanOrEqual(89);
});

test('clear() between chunks stops it', async () => {
  let fired = false;
  const timer = longTimeout(() => (fired = true), 60, 20);
  await new Promise((resolve) => setTimeout(resolve, 30));
  timer.clear();
  await new Promise((resolve) => setTimeout(resolve, 80));
  expect(fired).toBe(false);
});

test('a 30-day delay does not fire at once (no overflow to 1 ms)', async () => {
  let fired = false;
  const timer = longTimeout(() => (fired = true), 30 * 86_400_000);
  await new Promise((resolve) => setTimeout(resolve, 50));
  timer.clear();
  expect(fired).toBe(false);
});

test('never fires before its delay by now(): 300 timers of 1–30 ms each find it over', async () => {
  // Node's timers count on a whole-millisecond loop clock: a bare setTimeout(fn, 1000) can run when
  // now() says 999.x ms have passed (a --max-hold 1s stop reported held_ms 999).
  const early: number[] = [];
  await Promise.all(
    Array.from({ length: 300 }, (_, i) => {
      const ms = 1 + (i % 30);
      const start = now();
      return new Promise<void>((resolve) =>
        longTimeout(() => {
          if (now() - start < ms) early.push(now() - start - ms);
          resolve();
        }, ms),
      );
    }),
  );
  expect(early).toEqual([]);
});
