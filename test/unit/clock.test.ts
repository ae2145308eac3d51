// Events' ts_ms (src/clock.ts epochMs): sub-millisecond, and never off the wall clock by a
// millisecond or more, whatever happened between the clock readings when dlock started.

import { expect, test } from 'vitest';
import { epochMs } from '../../src/clock.js';

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
