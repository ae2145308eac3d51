// A wait without a terminal (CI, cron, a pipe) is visible: a status line when it starts (the
// holder, the place in line, the estimate) and one every 30 s, as text or as json events;
// --quiet silences them. Its own file: it waits behind a 65 s holder, in parallel with the rest.

import { expect, test } from 'vitest';
import { RedisServer } from '../../support/redis-server.mjs';
import { dlock } from '../helpers/cli.js';
import { events, spawnDlock } from '../fixtures/observe.js';
import { useRedisServer } from '../helpers/server.js';

let redis: RedisServer;
useRedisServer((server) => (redis = server));

test('behind a 65 s holder: a start line and two progress lines, 30 s apart', async () => {
  const key = 'ci-deploy';
  const run = (flags: string[], command: string[]) =>
    spawnDlock(['run', '--redis', redis.url, ...flags, key, '--', ...command]);
  // One earlier hold in the history, so the wait has an estimate.
  expect((await dlock(['run', '--redis', redis.url, key, '--', 'true'])).code).toBe(0);
  const holder = run(['--log-format', 'json'], ['sleep', '65']);
  await holder.waitFor('"event":"acquired"');
  const text = run(['--wait', '2m'], ['true']);
  await text.waitFor(`dlock: waiting for ${key}`);
  const json = run(['--log-format', 'json', '--wait', '2m'], ['true']);
  await json.waitFor('"event":"wait-status"');
  const quiet = run(['-q', '--wait', '2m'], ['true']);

  const results = [holder.result, text.result, json.result, quiet.result];
  const [held, shown, logged, silent] = await Promise.all(results);
  for (const result of [held, shown, logged, silent]) expect(result.code, result.stderr).toBe(0);

  const holderPid = holder.process.pid;
  const lines = shown.stderr.trimEnd().split('\n');
  expect(lines).toHaveLength(3);
  const status = (what: string, waited: string) => {
    const holderText = `held by \\S+ pid ${holderPid}, .*`;
    const start = `^dlock: ${what} ${key} \\(1st in line; turn in about \\d+s; `;
    return new RegExp(`${start}${holderText}; waited ${waited} of 2m\\)$`);
  };
  expect(lines[0]).toMatch(status('waiting for', '\\d+ms'));
  expect(lines[1]).toMatch(status('still waiting for', '3\\d(\\.\\d)?s'));
  expect(lines[2]).toMatch(status('still waiting for', '1m(\\ds)?'));

  const [waiting] = events(logged.stderr, 'waiting');
  const statuses = events(logged.stderr, 'wait-status');
  const [acquired] = events(logged.stderr, 'acquired');
  expect(statuses).toHaveLength(3);
  for (const event of statuses) {
    const message = expect.stringMatching(/2nd in line/);
    expect(event).toMatchObject({ key, place: 2, holder: { pid: holderPid }, message });
    expect(event.turn_ms).toEqual(expect.any(Number));
  }
  // The first when the wait starts (once the holder is read), then one every 30 s of waiting
  // until the lock is ours (5 ms: the timer and ts_ms read the clock apart).
  expect(statuses[0]!.ts_ms - waiting!.ts_ms).toBeLessThan(1_000);
  for (const n of [1, 2]) {
    expect(statuses[n]!.ts_ms - waiting!.ts_ms).toBeGreaterThanOrEqual(n * 30_000 - 5);
    expect(statuses[n]!.ts_ms - waiting!.ts_ms).toBeLessThan(n * 30_000 + 2_000);
  }
  expect(acquired!.ts_ms).toBeGreaterThan(statuses[2]!.ts_ms);
  expect(silent.stderr).toBe('');
}, 120_000);
