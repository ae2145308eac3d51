// doctor's judgements as pure functions (src/backends/redis/doctor/checks.ts): the thresholds README
// "dlock doctor" states, as a table. The end-to-end verdicts are in doctor.test.ts.

import { describe, expect, test } from 'vitest';
import {
  clockCheck,
  clockLimits,
  clockSpreadCheck,
  rttCheck,
  tlsCheck,
  versionCheck,
} from '../../src/backends/redis/doctor/checks.js';

describe('clock limits scale with the TTL', () => {
  test.each([
    [30_000, 502, 20_000],
    [1_000, 112, 666],
    [120_000, 1_402, 80_000],
  ])('ttl %ims: warn above %ims, fail above %ims', (ttl, warnMs, failMs) => {
    expect(clockLimits(ttl)).toEqual({ warnMs, failMs });
  });

  test.each([
    [400, 1, 'OK'],
    [600, 1, 'WARN'],
    // Only what is surely off counts: 600ms ±200ms may be 400ms.
    [600, 200, 'OK'],
    [-5_000, 1, 'WARN'],
    [25_000, 1, 'FAIL'],
    [-25_000, 1, 'FAIL'],
  ])('offset %ims ±%ims at 30s: %s', (offset, uncertainty, status) => {
    expect(clockCheck(offset, uncertainty, 30_000).status).toBe(status);
  });

  test('the message says which side and by how much', () => {
    expect(clockCheck(-5_000, 1, 30_000).message).toMatch(
      /^the server's clock is 5s behind this host's \(±1ms\), more than 502ms/,
    );
  });
});

describe('clock spread between Redlock instances', () => {
  const at = (label: string, offsetMs: number, uncertaintyMs = 1) => ({ label, offsetMs, uncertaintyMs });
  test.each([
    [[at('a', 0), at('b', 100), at('c', -100)], 'OK'],
    [[at('a', 0), at('b', 100), at('c', -700)], 'WARN'],
    // Both far off the same way: they agree with each other (the per-instance check says the rest).
    [[at('a', 9_000), at('b', 9_050)], 'OK'],
    [[at('a', 0), at('b', 700, 200)], 'OK'],
  ])('%j: %s', (offsets, status) => {
    expect(clockSpreadCheck(offsets, 30_000).status).toBe(status);
  });

  test('names the two instances furthest apart', () => {
    expect(clockSpreadCheck([at('a', 0), at('b', 100), at('c', -900)], 30_000).message).toMatch(
      /^b and c differ by 1s/,
    );
  });
});

describe('round trip against the per-request timeout', () => {
  test.each([
    [0.4, 5_000, 'OK'],
    [600, 5_000, 'WARN'],
    [5_000, 5_000, 'FAIL'],
  ])('%ims of %ims: %s', (rtt, timeout, status) => {
    expect(rttCheck(rtt, timeout, 30_000).status).toBe(status);
  });
});

describe('version and TLS', () => {
  test.each([
    ['3.2.12', 'FAIL'],
    ['5.0.14', 'WARN'],
    ['6.0.0', 'OK'],
    ['7.2.4', 'OK'],
    [undefined, 'WARN'],
  ])('Redis %s: %s', (version, status) => {
    expect(versionCheck(version).status).toBe(status);
  });

  test.each([
    [false, '127.0.0.1', 'OK'],
    [false, '::1', 'OK'],
    [false, 'localhost', 'OK'],
    [false, '10.0.0.5', 'WARN'],
    [false, 'redis.internal', 'WARN'],
    [true, 'redis.internal', 'OK'],
  ])('tls %s to %s: %s', (tls, host, status) => {
    expect(tlsCheck(tls, host).status).toBe(status);
  });
});
