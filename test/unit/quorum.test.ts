// The Redlock arithmetic and the fencing-token maximum as table tests (no server).

import { describe, expect, test } from 'vitest';
import { maxFence } from '../../src/backends/redis/lock/fence.js';
import { quorumSize, tally, type Outcome } from '../../src/backends/redis/quorum.js';
import {
  driftMs,
  instanceTimeoutMs,
  killDeadline,
  localDeadline,
  RENEW_PAST_GIVING_UP_MS,
  RENEW_TIMEOUT_FLOOR_MS,
  renewTimeoutMs,
  SCHEDULING_MARGIN_CAP_MS,
  schedulingMarginMs,
  validityMs,
} from '../../src/timing.js';
import { busyRetryMs } from '../../src/backends/redis/waiter.js';
import { POLL_CAP_MS } from '../../src/backends/redis/lock/limits.js';

describe('quorumSize: floor(N/2)+1', () => {
  test.each([
    [1, 1],
    [2, 2],
    [3, 2],
    [4, 3],
    [5, 3],
    [6, 4],
    [7, 4],
    [9, 5],
  ])('N=%i needs %i', (instances, quorum) => {
    expect(quorumSize(instances)).toBe(quorum);
  });

  test('any two quorums of the same N intersect', () => {
    for (let n = 1; n <= 15; n++) expect(2 * quorumSize(n)).toBeGreaterThan(n);
  });
});

describe('driftMs: ttl*0.01 + 2ms, rounded up', () => {
  test.each([
    [100, 3],
    [150, 4],
    [300, 5],
    [700, 9],
    [1_000, 12],
    [1_999, 22],
    [30_000, 302],
    [3_600_000, 36_002],
  ])('ttl %ims -> %ims', (ttl, drift) => {
    expect(driftMs(ttl)).toBe(drift);
  });
});

describe('validityMs: ttl - elapsed - drift', () => {
  test.each([
    // ttl, startedAt, now, validity
    [1_000, 0, 0, 988],
    [1_000, 500, 600, 888],
    [1_000, 0, 988, 0],
    [1_000, 0, 989, -1],
    [30_000, 10.5, 1_010.5, 28_698],
    [100, 0, 97, 0],
  ])('ttl %i, started %f, now %f -> %f', (ttl, startedAt, now, validity) => {
    expect(validityMs(ttl, startedAt, now)).toBe(validity);
  });
});

describe('localDeadline: start of the last success + ttl - drift', () => {
  test.each([
    [1_000, 0, 988],
    [1_000, 12_345.5, 13_333.5],
    [30_000, 1_000, 30_698],
  ])('ttl %i from %f -> %f', (ttl, startedAt, deadline) => {
    expect(localDeadline(ttl, startedAt)).toBe(deadline);
  });

  test('is exactly where validity reaches zero', () => {
    for (const ttl of [100, 1_000, 7_777, 30_000]) expect(validityMs(ttl, 50, localDeadline(ttl, 50))).toBe(0);
  });
});

describe('schedulingMarginMs: a tenth of the TTL, at most 200ms', () => {
  test.each([
    [100, 10],
    [150, 15],
    [500, 50],
    [1_000, 100],
    [1_999, 199],
    [2_000, 200],
    [30_000, 200],
    [3_600_000, 200],
  ])('ttl %ims -> %ims', (ttl, margin) => {
    expect(schedulingMarginMs(ttl)).toBe(margin);
  });

  test('with the drift, the SIGKILL comes before the lease ends, and more than half a TTL after the last renewal', () => {
    for (const ttl of [100, 101, 333, 1_000, 7_777, 30_000, 3_600_000]) {
      const kill = killDeadline(ttl, 0);
      expect(kill).toBe(ttl - driftMs(ttl) - schedulingMarginMs(ttl));
      expect(kill).toBeLessThan(ttl);
      expect(kill).toBeGreaterThan(ttl / 3 + (0.5 * ttl) / 3);
      expect(schedulingMarginMs(ttl)).toBeLessThanOrEqual(SCHEDULING_MARGIN_CAP_MS);
    }
  });
});

describe('killDeadline: the local deadline less the scheduling margin', () => {
  test.each([
    [100, 0, 87],
    [1_000, 0, 888],
    [1_000, 12_345.5, 13_233.5],
    [30_000, 1_000, 30_498],
  ])('ttl %i from %f -> %f', (ttl, startedAt, deadline) => {
    expect(killDeadline(ttl, startedAt)).toBe(deadline);
  });
});

describe('renewTimeoutMs: --connect-timeout, ending just after the lease gives up, at least a floor', () => {
  test.each([
    // connect timeout, ms left until the lease gives up, timeout
    [5_000, 20_000, 5_000],
    [5_000, 5_000, 5_000],
    [5_000, 222, 222 + RENEW_PAST_GIVING_UP_MS],
    [5_000, 222.9, 222 + RENEW_PAST_GIVING_UP_MS],
    [150, 222, 150],
    [224, 222, 224],
    [5_000, 10, 10 + RENEW_PAST_GIVING_UP_MS],
    [5_000, 3, RENEW_TIMEOUT_FLOOR_MS],
    [5_000, 0, RENEW_TIMEOUT_FLOOR_MS],
    [5_000, -40, RENEW_TIMEOUT_FLOOR_MS],
    [1, 500, RENEW_TIMEOUT_FLOOR_MS],
  ])('connect %i, %f left -> %i', (connect, left, timeout) => {
    expect(renewTimeoutMs(connect, left)).toBe(timeout);
  });

  test('a renewal bounded by the time left outlives the lease giving up, by a few milliseconds only', () => {
    for (const left of [50, 333.3, 1_000]) {
      expect(renewTimeoutMs(60_000, left)).toBeGreaterThan(left);
      expect(renewTimeoutMs(60_000, left)).toBeLessThanOrEqual(left + 10);
    }
  });

  test('ttl 1s, default --kill-after: a first renewal gets more than a 150ms round trip (ttl/10 was 100ms)', () => {
    const ttl = 1_000;
    const grace = Math.floor(ttl / 3);
    const givesUpAt = killDeadline(ttl, 0) - grace;
    expect(renewTimeoutMs(5_000, givesUpAt - ttl / 3)).toBeGreaterThan(150);
  });
});

describe('tally: won / refused / unavailable / undecided', () => {
  const o = (text: string): Outcome[] => [...text].map((c) => (c === 'y' ? 'yes' : c === 'n' ? 'no' : 'error'));
  test.each([
    // outcomes (y/n/e), total (missing entries = unreachable), verdict
    ['y', 1, 'won'],
    ['n', 1, 'refused'],
    ['e', 1, 'unavailable'],
    ['', 1, 'unavailable'],
    ['yyy', 3, 'won'],
    ['yye', 3, 'won'],
    ['yy', 3, 'won'],
    ['ynn', 3, 'refused'],
    ['yne', 3, 'undecided'],
    ['yee', 3, 'unavailable'],
    ['nee', 3, 'unavailable'],
    ['y', 3, 'unavailable'],
    ['yyynn', 5, 'won'],
    ['yyyee', 5, 'won'],
    ['yynnn', 5, 'refused'],
    ['nnnee', 5, 'refused'],
    ['yynne', 5, 'undecided'],
    ['yynee', 5, 'undecided'],
    ['yyeee', 5, 'unavailable'],
    ['nneee', 5, 'unavailable'],
    ['yyn', 5, 'undecided'],
    ['yy', 5, 'unavailable'],
    ['yyny', 4, 'won'],
    ['yynn', 4, 'refused'],
    ['yyee', 4, 'unavailable'],
  ])('%s of %i -> %s', (outcomes, total, verdict) => {
    expect(tally(o(outcomes), total)).toBe(verdict);
  });

  test('"unavailable" and "refused" never both apply, and a win needs a quorum of yes', () => {
    for (let total = 1; total <= 7; total++) {
      for (let yes = 0; yes <= total; yes++) {
        for (let no = 0; yes + no <= total; no++) {
          const outcomes = o('y'.repeat(yes) + 'n'.repeat(no) + 'e'.repeat(total - yes - no));
          const verdict = tally(outcomes, total);
          expect(verdict === 'won').toBe(yes >= quorumSize(total));
          // refused: the no's alone make a quorum of yes impossible, whatever the errors would have said
          if (verdict === 'refused') expect(total - no).toBeLessThan(quorumSize(total));
          if (verdict === 'unavailable') expect(yes + no).toBeLessThan(quorumSize(total));
        }
      }
    }
  });
});

describe('instanceTimeoutMs: --connect-timeout, and small next to the TTL', () => {
  test.each([
    // connect timeout, ttl, instances, per-instance timeout
    [5_000, 30_000, 1, 5_000],
    [5_000, 30_000, 3, 3_000],
    [5_000, 30_000, 5, 3_000],
    [5_000, 1_000, 1, 333],
    [5_000, 1_000, 5, 100],
    [50, 1_000, 5, 50],
    [5_000, 100, 3, 10],
    [5_000, 5, 3, 1],
  ])('connect %i, ttl %i, N=%i -> %i', (connect, ttl, n, timeout) => {
    expect(instanceTimeoutMs(connect, ttl, n)).toBe(timeout);
  });
});

describe("busyRetryMs: the holder's remaining TTL, capped, plus jitter", () => {
  test.each([
    // retry in, random, delay
    [0, 0, 1],
    [0, 1, 1],
    [100, 0, 101],
    [100, 1, 106],
    [1_000, 0.5, 1_026],
    [1_000, 1, 1_051],
    [POLL_CAP_MS, 0, POLL_CAP_MS + 1],
    [60_000, 0, POLL_CAP_MS + 1],
    [60_000, 1, POLL_CAP_MS + 51],
    [Infinity, 1, POLL_CAP_MS + 51],
  ])('retry in %f, random %f -> %i', (retryIn, random, delay) => {
    expect(busyRetryMs(retryIn, random)).toBe(delay);
  });

  test('never sleeps less than the lock has left (up to the cap), nor more than 5% or 50ms over it', () => {
    for (const retryIn of [1, 37, 999, 4_000, 123_456]) {
      for (const random of [0, 0.3, 0.999]) {
        const delay = busyRetryMs(retryIn, random);
        const base = Math.min(retryIn, POLL_CAP_MS);
        expect(delay).toBeGreaterThan(base);
        expect(delay).toBeLessThanOrEqual(base + 1 + Math.min(base * 0.05, 50) + 0.5);
      }
    }
  });
});

describe('maxFence: decimal strings, exact past 2^53', () => {
  test.each([
    ['0', '0', '0'],
    ['1', '2', '2'],
    ['2', '1', '2'],
    ['9', '10', '10'],
    ['99999', '100000', '100000'],
    ['1001', '999', '1001'],
    ['9007199254740992', '9007199254740993', '9007199254740993'],
    ['9007199254740993', '9007199254740992', '9007199254740993'],
    ['9007199254740995', '9007199254740994', '9007199254740995'],
    ['9223372036854775807', '9223372036854775806', '9223372036854775807'],
    ['18446744073709551616', '9223372036854775807', '18446744073709551616'],
  ])('max(%s, %s) = %s', (a, b, max) => {
    expect(maxFence(a, b)).toBe(max);
    expect(maxFence(b, a)).toBe(max);
  });

  test('agrees with BigInt as a reduce over many tokens', () => {
    const tokens = ['3', '9007199254740993', '12', '9007199254740992', '700', '9007199254740995', '9007199254740994'];
    const expected = tokens.map(BigInt).reduce((a, b) => (a > b ? a : b));
    expect(tokens.reduce(maxFence)).toBe(expected.toString());
  });
});
