// A wait without a terminal (CI, cron, a pipe) is visible: a status line when it starts (the
// holder, the place in line, the estimate) and one every 30 s, as text or as json events;
// --quiet silences them. Its own file: it waits behind a holder for over a minute (the two 30 s
// periods it checks), in parallel with the rest.

import { execFileSync } from 'node:child_process';
import { closeSync, constants, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { RedisServer } from '../../support/redis-server.mjs';
import { dlock } from '../helpers/cli.js';
import { events, spawnDlock, tempDir } from '../fixtures/observe.js';
import { useRedisServer } from '../helpers/server.js';

let redis: RedisServer;
useRedisServer((server) => (redis = server));

test('behind a holder for over a minute: a start line and two progress lines, 30 s apart', async () => {
  const key = 'ci-deploy';
  const run = (flags: string[], command: string[]) =>
    spawnDlock(['run', '--redis', redis.url, ...flags, key, '--', ...command]);
  // One earlier hold in the history, so the wait has one to give (here: unknown, the holder is past it).
  expect((await dlock(['run', '--redis', redis.url, key, '--', 'true'])).code).toBe(0);
  // The holder holds until the test opens its gate (a FIFO its command reads), once both waits have
  // written their 1 m line: no longer than that (it was a fixed 65 s).
  const gate = join(tempDir(), 'gate');
  execFileSync('mkfifo', [gate]);
  const holder = run(['--log-format', 'json'], ['sh', '-c', 'read go < "$0"', gate]);
  await holder.waitFor('"event":"acquired"');
  const text = run(['--wait', '2m'], ['true']);
  await text.waitFor(`dlock: waiting for ${key}`);
  const json = run(['--log-format', 'json', '--wait', '2m'], ['true']);
  await json.waitFor('"event":"wait-status"');
  const quiet = run(['-q', '--wait', '2m'], ['true']);
  await Promise.all([
    text.waitFor(/still waiting for [^\n]* waited 1m/),
    json.waitFor(/(?:"event":"wait-status"[^]*){3}/),
  ]);
  const open = openSync(gate, constants.O_WRONLY | constants.O_NONBLOCK);
  writeSync(open, 'go\n');
  closeSync(open);

  const results = [holder.result, text.result, json.result, quiet.result];
  const [held, shown, logged, silent] = await Promise.all(results);
  for (const result of [held, shown, logged, silent]) expect(result.code, result.stderr).toBe(0);

  const holderPid = holder.process.pid;
  const lines = shown.stderr.trimEnd().split('\n');
  expect(lines).toHaveLength(3);
  const status = (what: string, waited: string) => {
    const holderText = `held by \\S+ pid ${holderPid}, .*`;
    // The one earlier hold took milliseconds; this holder has held longer: no honest estimate.
    const start = `^dlock: ${what} ${key} \\(1st in line; turn time unknown; `;
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
    expect(event).not.toHaveProperty('turn_ms');
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

// Issue 31: "turn in about 1s" behind a holder that had held 600x the median, and behind a
// --no-keeper hold with 59 s of lease left.
test('the estimate counts the holder in front: past the usual hold it is unknown; a --no-keeper hold, its lease left', async () => {
  const key = 'turn-front';
  const url = ['--redis', redis.url];
  for (let i = 0; i < 3; i++) expect((await dlock(['run', ...url, key, '--', 'true'])).code).toBe(0);
  const holder = spawnDlock(['run', ...url, '--log-format', 'json', key, '--', 'sleep', '30']);
  await holder.waitFor('"event":"acquired"');
  const behindLong = await dlock(['run', ...url, '-w', '1s', key, '--', 'true']);
  expect(behindLong.code, behindLong.stderr).toBe(75);
  expect(behindLong.stderr).toMatch(
    new RegExp(`^dlock: waiting for ${key} \\(1st in line; turn time unknown; held by `),
  );
  const json = await dlock(['run', ...url, '--log-format', 'json', '-w', '1s', key, '--', 'true']);
  const [status] = events(json.stderr, 'wait-status');
  expect(status).toMatchObject({ place: 1 });
  expect(status).not.toHaveProperty('turn_ms');
  holder.process.kill('SIGTERM');
  await holder.result;

  const acquired = await dlock(['acquire', ...url, '--no-keeper', '--ttl', '1m', key]);
  expect(acquired.code, acquired.stderr).toBe(0);
  const behindLease = await dlock(['run', ...url, '--log-format', 'json', '-w', '1s', key, '--', 'true']);
  const [leased] = events(behindLease.stderr, 'wait-status');
  // The lease's time left when the line was written (its holder field says it), rounded to the second.
  const left = (leased!.holder as { ttl_left_ms: number }).ttl_left_ms;
  expect(left).toBeGreaterThan(50_000);
  expect(leased!.turn_ms).toBe(Math.round(left / 1000) * 1000);
  expect(leased!.message).toMatch(/turn in about (1m|5\ds);/);
}, 60_000);
