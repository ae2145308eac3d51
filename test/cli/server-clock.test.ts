// The ages dlock shows count on the Redis server's clock, not the holder's or the reader's: a
// holder whose clock is 1 h behind and a reader whose clock is 1 h (or 2 h) ahead still show how
// long ago the lock was taken within a second or two of the truth. The clocks are shifted with
// libfaketime through the `faketime` wrapper, as in doctor.test.ts (redis-server itself is never
// run under it: its jemalloc and libfaketime deadlock); it shifts the Bun binary's clock as it
// does Node's (checked: `faketime -f +1h dist/dlock-linux-x64 run --log-format json` logs ts_ms
// 1 h ahead), so these run against both builds. The true time is this test's clock, which the
// redis-server shares; the holders' JSON events are on their shifted clocks, so bounds come from
// the test's own readings around each step.

import { afterEach, expect, test } from 'vitest';
import { cleanEnv, dlock, type StartOptions } from '../helpers/cli.js';
import { events, hold, killLeftovers, removeTempDirs } from '../fixtures/observe.js';
import { samples } from '../helpers/metrics.js';
import { useRedisServer } from '../helpers/server.js';
import type { RedisServer } from '../../support/redis-server.mjs';

let redis: RedisServer;
useRedisServer((server) => (redis = server));
afterEach(() => {
  killLeftovers();
  removeTempDirs();
});

/** dlock's wall clock shifted by `offset`; its monotonic clock (timers, round trips) left alone. */
const shifted = (offset: string): StartOptions & { env: NodeJS.ProcessEnv; via: string[] } => ({
  via: ['faketime', '-f', offset],
  env: cleanEnv({ FAKETIME_DONT_FAKE_MONOTONIC: '1' }),
});

/** formatDuration's text ("850ms", "1.5s", "1h2m3s") back to ms. */
function ms(text: string): number {
  const only = /^(\d+)ms$/.exec(text);
  if (only) return Number(only[1]);
  const parts = /^(?:(\d+)h)?(?:(\d+)m)?(?:([\d.]+)s)?$/.exec(text);
  if (!parts || text === '') throw new Error(`not a duration: ${text}`);
  return (Number(parts[1] ?? 0) * 3600 + Number(parts[2] ?? 0) * 60 + Number(parts[3] ?? 0)) * 1000;
}

/** A holder of `key` on a clock 1 h behind, renewing every second; the true times around its start. */
async function lateHolder(key: string, flags: string[] = []) {
  const spawnedAt = Date.now();
  const holder = hold(key, {
    redis: redis.url,
    flags: ['--ttl', '3s', '--max-hold', '1h', '--heartbeat', '1h', ...flags],
    ...shifted('-1h'),
  });
  await holder.waitFor('"event":"acquired"');
  const acquiredSeen = Date.now();
  // A renewal stores the last heartbeat (none yet: the command's start).
  await holder.waitFor('"event":"renewed"');
  return { holder, spawnedAt, acquiredSeen, renewedSeen: Date.now() };
}

/** Within [low, high] with 150 ms of rounding (formatDuration keeps tenths of a second). */
function expectBetween(value: number, low: number, high: number, what: string): void {
  expect(value, what).toBeGreaterThanOrEqual(low - 150);
  expect(value, what).toBeLessThanOrEqual(high + 150);
}

test('holder 1 h behind, reader 1 h ahead: status says since, held and last heartbeat as they truly are', async () => {
  const key = 'skewed';
  const { holder, spawnedAt, acquiredSeen, renewedSeen } = await lateHolder(key);
  const asked = Date.now();
  const text = await dlock(['status', '--redis', redis.url, key], shifted('+1h'));
  const json = await dlock(['status', '--redis', redis.url, key, '--json'], shifted('+1h'));
  const listed = await dlock(['status', '--redis', redis.url], shifted('+1h'));
  const answered = Date.now();
  holder.stop();
  expect((await holder.result).code).toBe(0);
  for (const result of [text, json, listed]) expect(result.code, result.stderr).toBe(0);

  const since = /^ {2}since {4}(\S+) \((\S+) ago\)$/m.exec(text.stdout)!;
  expect(since, text.stdout).not.toBeNull();
  expectBetween(Date.parse(since[1]), spawnedAt, acquiredSeen, 'since');
  expectBetween(ms(since[2]), asked - acquiredSeen, answered - spawnedAt, 'since … ago');
  const bound = /^ {2}bound {4}held (\S+) of --max-hold 1h$/m.exec(text.stdout)!;
  expectBetween(ms(bound[1]), asked - acquiredSeen, answered - spawnedAt, 'held … of --max-hold');
  const beat = /^ {2}beat {5}last heartbeat (\S+) ago$/m.exec(text.stdout)!;
  expectBetween(ms(beat[1]), asked - renewedSeen, answered - spawnedAt, 'last heartbeat');

  const { holder: shown } = JSON.parse(json.stdout);
  expectBetween(shown.since_ms, spawnedAt, acquiredSeen, 'since_ms');
  expectBetween(shown.last_heartbeat_ms, spawnedAt, renewedSeen, 'last_heartbeat_ms');

  const row = listed.stdout.split('\n').find((line) => line.startsWith(`${key} `))!;
  const forCell = row.trim().split(/\s+/)[3];
  expectBetween(ms(forCell), asked - acquiredSeen, answered - spawnedAt, 'the listing FOR');
});

test('--slots: each holder its age and last heartbeat on the server clock (enter, extend-holder)', async () => {
  const key = 'skewed-slots';
  const { holder, spawnedAt, acquiredSeen, renewedSeen } = await lateHolder(key, ['--slots', '2']);
  const asked = Date.now();
  const text = await dlock(['status', '--redis', redis.url, key], shifted('+1h'));
  const json = await dlock(['status', '--redis', redis.url, key, '--json'], shifted('+1h'));
  const answered = Date.now();
  holder.stop();
  expect((await holder.result).code).toBe(0);

  const row = text.stdout.split('\n').find((line) => /^ {2}0 /.test(line))!;
  expect(row, text.stdout).toBeDefined();
  expectBetween(ms(row.trim().split(/\s+/)[3]), asked - acquiredSeen, answered - spawnedAt, 'FOR');
  const [shown] = JSON.parse(json.stdout).holders;
  expectBetween(shown.since_ms, spawnedAt, acquiredSeen, 'since_ms');
  expectBetween(shown.last_heartbeat_ms, spawnedAt, renewedSeen, 'last_heartbeat_ms');
});

test('holder 1 h behind, waiter 2 h ahead: the waiting line says how long it has truly been held', async () => {
  const key = 'skewed-wait';
  const { holder, spawnedAt, acquiredSeen } = await lateHolder(key);
  const ahead = shifted('+2h');
  const asked = Date.now();
  const text = hold(key, { redis: redis.url, flags: ['--wait', '20s'], ...ahead });
  await text.waitFor('"event":"wait-status"');
  const waited = Date.now();
  holder.stop();
  text.stop();
  expect((await holder.result).code).toBe(0);
  expect((await text.result).code).toBe(0);

  const [status] = events(text.stderr(), 'wait-status');
  const held = /held by \S+ pid \d+, for (\S+),/.exec(String(status.message))!;
  expect(held, String(status.message)).not.toBeNull();
  expectBetween(ms(held[1]), asked - acquiredSeen, waited - spawnedAt, 'held … for');
  expectBetween((status.holder as { since_ms: number }).since_ms, spawnedAt, acquiredSeen, 'since_ms');
});

test('metrics on a clock 1 h ahead: the age of the last success counts on the server clock', async () => {
  const key = 'skewed-metrics';
  const before = Date.now();
  expect((await dlock(['run', '--redis', redis.url, key, '--', 'true'], shifted('-1h'))).code).toBe(0);
  const result = await dlock(['metrics', '--redis', redis.url, key], shifted('+1h'));
  const collected = Date.now();
  expect(result.code, result.stderr).toBe(0);
  const seconds = Number(
    samples(result.stdout).get(`dlock_lock_last_success_age_seconds{key="${key}",prefix="dlock:"}`),
  );
  expectBetween(seconds * 1000, 0, collected - before, 'seconds since success');
});

test('release --force on a clock 1 h ahead: the removed holder held "for" its true age', async () => {
  const key = 'skewed-force';
  const { holder, spawnedAt, acquiredSeen } = await lateHolder(key);
  const asked = Date.now();
  const forced = await dlock(['release', '--redis', redis.url, '--force', '--now', key], shifted('+1h'));
  const answered = Date.now();
  expect(forced.code, forced.stderr).toBe(0);
  const held = /released the lock held by \S+ pid \d+, for (\S+),/.exec(forced.stdout)!;
  expect(held, forced.stdout).not.toBeNull();
  expectBetween(ms(held[1]), asked - acquiredSeen, answered - spawnedAt, 'held … for');
  await holder.result;
});
