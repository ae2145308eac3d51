// Durations as users write them (docs/reference/options.md): a pure-function table, no server.

import { describe, expect, test } from 'vitest';
import { formatDuration, parseDuration } from '../../src/duration.js';

describe('parseDuration', () => {
  test.each([
    ['250ms', 250],
    ['30s', 30_000],
    ['5m', 300_000],
    ['1h', 3_600_000],
    ['1d', 86_400_000], // --once-per 1d for a daily job
    ['1.5d', 129_600_000],
    ['10', 10_000], // a bare number means seconds
    ['0', 0],
    ['0ms', 0],
    ['1.5s', 1_500],
    ['0.5', 500],
    ['1.5m', 90_000],
    ['100ms', 100],
    ['007s', 7_000],
    // flock's man page writes `-w .007`: a leading dot, with or without a unit.
    ['.5', 500],
    ['.007', 7],
    ['.5s', 500],
    ['.25m', 15_000],
    ['.5ms', 1], // rounded to whole milliseconds
    // Go's time.ParseDuration forms, as etcdctl and consul take them (and Go's own String()).
    ['1h30m', 5_400_000],
    ['1m30s', 90_000],
    ['1h0m0s', 3_600_000],
    ['2m30.5s', 150_500],
    ['1d12h', 129_600_000],
    ['1s500ms', 1_500],
    ['1500us', 2],
    ['1500µs', 2],
    ['2000000ns', 2],
    ['30d', 2_592_000_000], // past 2^31 ms: timers are split (src/clock.ts)
  ])('%j is %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  test.each([
    '',
    ' ',
    's',
    'ms',
    '-1s',
    '-5',
    '+5s',
    '1D',
    '1w',
    '1S',
    '1MS',
    '1 s',
    ' 30s ', // no spaces: the grammar has none (docs/reference/options.md)
    '30s ',
    ' 30s',
    '1m 30s',
    '1h30', // a bare number only alone
    '1h.5',
    '1hm',
    '5m-1s',
    '.',
    '.s',
    '..5',
    '.5.5',
    '-.5',
    '+.5',
    '. 5',
    '.5 s',
    '.e3',
    '1.s',
    '1e3',
    '0x10',
    'Infinity',
    'NaN',
    'thirty',
    '30sec',
    '99999999999999999999h',
  ])('%j is not a duration', (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });
});

describe('formatDuration', () => {
  test.each([
    [0, '0ms'],
    [-5, '0ms'],
    [1, '1ms'],
    [250, '250ms'],
    [999, '999ms'],
    [1_000, '1s'],
    [1_500, '1.5s'],
    [30_000, '30s'],
    [60_000, '1m'],
    [90_000, '1m30s'],
    [300_000, '5m'],
    [3_600_000, '1h'],
    [3_661_000, '1h1m1s'],
    [7_200_000 + 5_000, '2h5s'],
    // A day or more is shown in days (--once-per 30d, not 720h).
    [86_400_000 - 1_000, '23h59m59s'],
    [86_400_000, '1d'],
    [86_400_000 + 7_200_000 + 60_000, '1d2h1m'],
    [30 * 86_400_000, '30d'],
    [25 * 86_400_000, '25d'],
    [36_500 * 86_400_000, '36500d'],
  ])('%d ms is %j', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  test.each([250, 1_000, 1_500, 30_000, 60_000, 300_000, 3_600_000, 86_400_000, 93_784_000, 30 * 86_400_000])(
    '%d ms survives format then parse',
    (ms) => {
      expect(parseDuration(formatDuration(ms))).toBe(ms);
    },
  );
});
