// The deploy queue's order on one server (docs/guides/deploy-queue.md): --supersede leaves only the newest
// --supersede waiter in line, the holder untouched; --priority serves higher first, arrival order among
// equals; a superseded run is a turn-away for pings and hooks. Real redis-server, real dlock processes;
// the order from the commands' own output file.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { expect, test } from 'vitest';
import { RedisServer } from '../../support/redis-server.mjs';
import { hold, signalsSeen, tempDir } from '../fixtures/observe.js';
import { dlock, type Running } from '../helpers/cli.js';
import { eventOf, inLine, lineOf, runIn } from '../helpers/line.js';
import { useRedisServer } from '../helpers/server.js';
import { waitUntil } from '../../support/wait-until.mjs';
import { PingServer } from '../helpers/ping-server.js';

let redis: RedisServer;
let client: Redis;
useRedisServer((server) => {
  redis = server;
  client = server.client();
});

/** A waiter whose command appends `label` to `file`. */
function appender(key: string, file: string, label: string, flags: string[]): Running {
  return runIn(redis.url, key, flags, ['sh', '-c', `echo ${label} >>${file}`]);
}

function order(file: string): string[] {
  return readFileSync(file, 'utf8').trim().split('\n');
}

test('five --supersede waiters joining one by one: only the newest runs, the four others leave in order, each told by whom', async () => {
  const file = join(tempDir(), 'order');
  const holder = hold('deploy', { redis: redis.url, onSignal: 'ignore' });
  await holder.child();
  const waiters: Running[] = [];
  for (let i = 0; i < 5; i++) {
    const waiter = appender('deploy', file, `v${i}`, ['--supersede']);
    expect((await inLine(waiter)).place).toBe(1);
    // The one before it has left the line (dropped by this join): one waiter in line; it exits 75.
    expect(await lineOf(client, 'deploy')).toHaveLength(1);
    if (i > 0) expect((await waiters[i - 1].result).code).toBe(75);
    waiters.push(waiter);
  }
  const superseded = await Promise.all(waiters.slice(0, 4).map((w) => w.result));
  holder.stop();
  expect((await holder.result).code).toBe(0);
  const newest = await waiters[4].result;
  expect(newest.code, newest.stderr).toBe(0);
  expect(order(file)).toEqual(['v4']);
  expect(signalsSeen(holder.dir)).toEqual([]);

  const pids = waiters.map((w) => w.process.pid!);
  superseded.forEach((result, i) => {
    expect(result.code, result.stderr).toBe(75);
    const event = eventOf(result, 'superseded');
    expect(event).toMatchObject({ by_pid: pids[i + 1], by_cmd: `sh -c echo v${i + 1} >>${file}` });
    expect(event.message).toMatch(
      new RegExp(`^deploy: superseded in line by \\S+ \\(pid ${pids[i + 1]}\\), running sh`),
    );
  });
  // In order: each was superseded (server time) when the next joined, before the one after it joined.
  const at = superseded.map((r) => eventOf(r, 'superseded').by_at_ms as number);
  for (let i = 1; i < 4; i++) expect(at[i]).toBeGreaterThan(at[i - 1]);

  const history = await dlock(['history', '--redis', redis.url, '--json', 'deploy']);
  const entries = JSON.parse(history.stdout) as { event: string; pid: number; by_pid: number }[];
  const supersededEntries = entries.filter((e) => e.event === 'superseded').reverse();
  expect(supersededEntries.map((e) => [e.pid, e.by_pid])).toEqual(pids.slice(0, 4).map((pid, i) => [pid, pids[i + 1]]));
});

test('waiters without --supersede are never superseded, and a newer --supersede waiter waits behind them', async () => {
  const file = join(tempDir(), 'order');
  const holder = hold('mixed', { redis: redis.url });
  await holder.child();
  const plain = appender('mixed', file, 'plain', []);
  await inLine(plain);
  const old = appender('mixed', file, 'old', ['--supersede']);
  await inLine(old);
  const fresh = appender('mixed', file, 'fresh', ['--supersede']);
  expect((await inLine(fresh)).place).toBe(2);
  expect((await old.result).code).toBe(75);
  holder.stop();
  const results = await Promise.all([holder.result, plain.result, fresh.result]);
  expect(results.map((r) => r.code)).toEqual([0, 0, 0]);
  expect(order(file)).toEqual(['plain', 'fresh']);
});

test('priorities 0, 5, 0, 9 joining in that order run 9, 5, 0, 0 (the two zeros in arrival order)', async () => {
  const file = join(tempDir(), 'order');
  const holder = hold('prio', { redis: redis.url });
  await holder.child();
  const asked = [
    ['first-0', '0'],
    ['five', '5'],
    ['second-0', '0'],
    ['nine', '9'],
  ];
  const waiters: Running[] = [];
  for (const [label, priority] of asked) {
    const waiter = appender('prio', file, label, ['--priority', priority]);
    await inLine(waiter);
    waiters.push(waiter);
  }
  const status = await dlock(['status', '--redis', redis.url, '--json', 'prio']);
  const line = (JSON.parse(status.stdout) as { line: { place: number; priority: number }[] }).line;
  expect(line.map((w) => w.priority)).toEqual([9, 5, 0, 0]);
  const text = await dlock(['status', '--redis', redis.url, 'prio']);
  expect(text.stdout).toMatch(/PLACE\s+MODE\s+PRIORITY/);

  holder.stop();
  const results = await Promise.all(waiters.map((w) => w.result));
  expect(results.map((r) => r.code)).toEqual([0, 0, 0, 0]);
  expect(order(file)).toEqual(['nine', 'five', 'first-0', 'second-0']);
});

test('a waiter says its place and priority while it waits', async () => {
  const holder = hold('told', { redis: redis.url });
  await holder.child();
  const waiter = runIn(redis.url, 'told', ['--priority', '-7'], ['true']);
  const waiting = await inLine(waiter);
  expect(waiting).toMatchObject({ place: 1, priority: -7 });
  holder.stop();
  expect((await waiter.result).code).toBe(0);
});

test.each([
  [['-n', '--supersede'], /^dlock: --supersede takes the place of older waiters in line: it cannot go with -n/],
  [['--priority', '1001'], /^dlock: --priority: expected an integer from -1000 to 1000 \(got "1001"\)$/],
  [['--priority', '1.5'], /^dlock: --priority: expected an integer from -1000 to 1000/],
])('bad input %j: 64 with one line', async (flags, message) => {
  const result = await dlock(['run', '--redis', redis.url, ...flags, 'bad', '--', 'true']);
  expect(result.code).toBe(64);
  expect(result.stderr.trim()).toMatch(message);
  expect(result.stderr.trim().split('\n')).toHaveLength(1);
});

test('Redlock refuses --priority and --supersede with 64 and says why', async () => {
  const urls = [redis.url, 'redis://127.0.0.1:1', 'redis://127.0.0.1:2'].flatMap((url) => ['--redis', url]);
  for (const flag of [['--priority', '1'], ['--supersede']]) {
    const result = await dlock(['run', ...urls, ...flag, 'rl', '--', 'true']);
    expect(result.code).toBe(64);
    expect(result.stderr).toMatch(/not a Redlock quorum of 3: a Redlock quorum has no line/);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
  }
});

test('etcd refuses --priority with 64 and says why, before it connects', async () => {
  const result = await dlock(['run', '--redis', 'etcd://127.0.0.1:1', '--priority', '1', 'e', '--', 'true']);
  expect(result.code).toBe(64);
  expect(result.stderr.trim()).toMatch(
    /is not built on etcd: etcd's mutex serves waiters by their keys' create revisions/,
  );
});

test('forged priorities are shown as 0; a forged superseder is shown escaped', async () => {
  const holder = hold('forged', { redis: redis.url });
  await holder.child();
  const waiter = runIn(redis.url, 'forged', ['--supersede'], ['true']);
  await inLine(waiter);
  const [owner] = await lineOf(client, 'forged');
  const details = JSON.parse((await client.hget('dlock:{forged}:line:info', owner))!) as Record<string, string>;
  await client.hset('dlock:{forged}:line:info', owner, JSON.stringify({ ...details, priority: '99999<b>' }));
  const status = await dlock(['status', '--redis', redis.url, '--json', 'forged']);
  expect((JSON.parse(status.stdout) as { line: { priority: number }[] }).line[0].priority).toBe(0);
  // A register that says a newer ticket was taken, by a forged someone: the waiter leaves, the text escaped.
  const forged = JSON.stringify({ host: '\x1b[31mevil\u202e', pid: 'x', cmd: '<script>', at_ms: '1e999' });
  await client.hset('dlock:{forged}:supersede', 'seq', '99', 'by', forged);
  await client.publish(`dlock:{forged}:wake:${owner}`, 'superseded');
  const result = await waiter.result;
  expect(result.code).toBe(75);
  const message = eventOf(result, 'superseded').message as string;
  expect(message).toContain('superseded in line by \\x1b[31mevil\\u202e, running <script>, which joined; not run');
  holder.stop();
  expect((await holder.result).code).toBe(0);
});

test('a superseded run is a turn-away for --ping (nothing, or <url>/log with --ping-busy) and hooks get the event', async () => {
  const server = await PingServer.start();
  try {
    const holder = hold('pinged', { redis: redis.url });
    await holder.child();
    const hookLog = join(tempDir(), 'hooks');
    const quiet = runIn(redis.url, 'pinged', ['--supersede', '--ping', server.url('quiet')], ['true']);
    await inLine(quiet);
    const loud = runIn(
      redis.url,
      'pinged',
      ['--supersede', '--ping', server.url('loud'), '--ping-busy', '--on-event', `echo $DLOCK_EVENT >>${hookLog}`],
      ['true'],
    );
    await inLine(loud);
    expect((await quiet.result).code).toBe(75);
    expect(server.paths('quiet')).toEqual([]);
    const last = runIn(redis.url, 'pinged', ['--supersede'], ['true']);
    await inLine(last);
    expect((await loud.result).code).toBe(75);
    expect(server.paths('loud')).toEqual(['/log']);
    expect(server.bodies('loud')[0]).toMatchObject({ key: 'pinged', event: 'superseded', exit_status: 75 });
    expect(readFileSync(hookLog, 'utf8')).toMatch(/waiting\n(?:wait-status\n)?superseded\n$/);
    holder.stop();
    expect((await last.result).code).toBe(0);
  } finally {
    await server.close();
  }
});

test('a superseded waiter that was stopped (its place lapsed) never runs when it comes back, nor supersedes the newer', async () => {
  const file = join(tempDir(), 'order');
  const holder = hold('stalled', { redis: redis.url });
  await holder.child();
  const older = appender('stalled', file, 'older', ['--supersede']);
  await inLine(older);
  older.process.kill('SIGSTOP');
  try {
    // Its place lapses while it is stopped; then a newer one joins and runs when the holder ends.
    await waitUntil('the stopped waiter out of line', async () => (await lineOf(client, 'stalled')).length === 0);
    const newer = appender('stalled', file, 'newer', ['--supersede']);
    await inLine(newer);
    holder.stop();
    expect((await newer.result).code).toBe(0);
  } finally {
    older.process.kill('SIGCONT');
  }
  const result = await older.result;
  expect(result.code, result.stderr).toBe(75);
  expect(eventOf(result, 'superseded').message).toMatch(/superseded in line by .*running sh -c echo newer/);
  expect(order(file)).toEqual(['newer']);
});
