// The line on one server (docs/reference/waiting-in-line.md): waiters run in arrival order; a waiter that
// is SIGKILLed drops out within its place lease, one that is signalled leaves at once; -n never
// jumps the line. Real redis-server, real dlock processes; times from the events' own ts_ms.

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { expect, test } from 'vitest';
import { RedisServer } from '../../support/redis-server.mjs';
import { hold, tempDir, waitForDeath } from '../fixtures/observe.js';
import { dlock, type Running } from '../helpers/cli.js';
import { eventOf, inLine, lineOf, runIn } from '../helpers/line.js';
import { useRedisServer } from '../helpers/server.js';
import { PLACE_LEASE_MS, PLACE_RENEW_MS } from '../../src/backends/redis/lock/limits.js';

let redis: RedisServer;
let client: Redis;
useRedisServer((server) => {
  redis = server;
  client = server.client();
});

/** A waiter whose command appends `index` to `file`. */
function appender(key: string, file: string, index: number, flags: string[] = []): Running {
  return runIn(redis.url, key, flags, ['sh', '-c', `echo ${index} >>${file}`]);
}

function order(file: string): number[] {
  return readFileSync(file, 'utf8').trim().split('\n').map(Number);
}

/** Start waiters one after another, each once the one before it is in line; returns them with their places. */
async function queue(key: string, file: string, indexes: number[]): Promise<Running[]> {
  const waiters: Running[] = [];
  for (const index of indexes) {
    const waiter = appender(key, file, index);
    const waiting = await inLine(waiter);
    expect(waiting.place, waiter.stderr()).toBe(waiters.length + 1);
    waiters.push(waiter);
  }
  return waiters;
}

test('10 waiters started one after another run in exactly that order, with fences in that order', async () => {
  const file = join(tempDir(), 'order');
  const holder = hold('fifo', { redis: redis.url });
  await holder.child();
  const indexes = Array.from({ length: 10 }, (_, i) => i);
  const waiters = await queue('fifo', file, indexes);
  expect(await lineOf(client, 'fifo')).toHaveLength(10);

  holder.stop();
  expect((await holder.result).code).toBe(0);
  const results = await Promise.all(waiters.map((w) => w.result));
  expect(results.map((r) => r.code)).toEqual(Array(10).fill(0));

  expect(order(file)).toEqual(indexes);
  const acquired = results.map((r) => eventOf(r, 'acquired'));
  for (let i = 1; i < acquired.length; i++) {
    expect(BigInt(acquired[i].fence!)).toBeGreaterThan(BigInt(acquired[i - 1].fence!));
  }
  const handovers = acquired.slice(1).map((a, i) => a.ts_ms - eventOf(results[i], 'released').ts_ms);
  console.log(
    `10 waiters in order; hand-overs (released → next acquired): ${handovers.map((g) => `${g.toFixed(1)}ms`).join(', ')}`,
  );
  expect(await lineOf(client, 'fifo')).toEqual([]);
});

test('a SIGKILLed waiter in the middle holds up the ones behind it at most its place lease plus one renewal', async () => {
  const file = join(tempDir(), 'order');
  const holder = hold('fifo-kill', { redis: redis.url });
  await holder.child();
  const [w0, w1, w2, w3, w4] = await queue('fifo-kill', file, [0, 1, 2, 3, 4]);

  const killedAt = Date.now();
  w2.process.kill('SIGKILL');
  await waitForDeath(w2.process.pid!);
  holder.stop();
  const results = await Promise.all([holder.result, w0.result, w1.result, w3.result, w4.result]);
  expect(results.map((r) => r.code)).toEqual([0, 0, 0, 0, 0]);
  const [, , r1, r3, r4] = results;

  // Everyone behind the dead waiter still ran, in order.
  expect(order(file)).toEqual([0, 1, 3, 4]);
  // Its place lapsed PLACE_LEASE_MS after its last renewal (at most at the kill); the one
  // behind it notices at its next renewal, at most PLACE_RENEW_MS later.
  const bound = PLACE_LEASE_MS + PLACE_RENEW_MS + 1_500;
  const sinceKill = eventOf(r3, 'acquired').ts_ms - killedAt;
  const stalled = eventOf(r3, 'acquired').ts_ms - eventOf(r1, 'released').ts_ms;
  const next = eventOf(r4, 'acquired').ts_ms - eventOf(r3, 'released').ts_ms;
  console.log(
    `SIGKILLed 3rd waiter: the 4th acquired ${sinceKill.toFixed(0)}ms after the kill, ${stalled.toFixed(0)}ms after the 2nd released (bound ${bound}ms); the 5th ${next.toFixed(1)}ms after the 4th released`,
  );
  expect(sinceKill).toBeLessThanOrEqual(bound);
  expect(stalled).toBeLessThanOrEqual(bound);
  expect(next).toBeLessThan(1_000);
  expect(await lineOf(client, 'fifo-kill')).toEqual([]);
}, 90_000);

test('a SIGTERMed waiter leaves the line at once: the one behind it gets the lock with no lease delay', async () => {
  const file = join(tempDir(), 'order');
  const holder = hold('fifo-term', { redis: redis.url });
  await holder.child();
  const [w0, w1, w2] = await queue('fifo-term', file, [0, 1, 2]);
  const before = await lineOf(client, 'fifo-term');

  w1.process.kill('SIGTERM');
  expect((await w1.result).code).toBe(143);
  // Its place is gone now, not when its lease would have lapsed.
  expect(await lineOf(client, 'fifo-term')).toEqual([before[0], before[2]]);

  holder.stop();
  const [held, r0, r2] = await Promise.all([holder.result, w0.result, w2.result]);
  expect([held.code, r0.code, r2.code]).toEqual([0, 0, 0]);
  expect(order(file)).toEqual([0, 2]);
  const gap = eventOf(r2, 'acquired').ts_ms - eventOf(r0, 'released').ts_ms;
  console.log(`SIGTERMed 2nd waiter: the 3rd acquired ${gap.toFixed(1)}ms after the 1st released`);
  expect(gap).toBeLessThan(1_000);
});

test('-n never jumps the line: busy while someone waits, even while the lock is between holders', async () => {
  const file = join(tempDir(), 'order');
  const holder = hold('fifo-n', { redis: redis.url });
  await holder.child();
  const [waiter] = await queue('fifo-n', file, [0]);

  // Held, someone in line.
  const busy = await runIn(redis.url, 'fifo-n', ['-n'], ['sh', '-c', `echo n >>${file}`]).result;
  expect(busy.code, busy.stderr).toBe(75);

  // Between holders: the waiter is stopped, so it cannot enter when the holder releases; the
  // lock is free, but its place in line is still valid.
  waiter.process.kill('SIGSTOP');
  try {
    holder.stop();
    expect((await holder.result).code).toBe(0);
    expect(await client.exists('dlock:{fifo-n}')).toBe(0);
    const [placed] = await lineOf(client, 'fifo-n');
    expect(placed).toBeDefined();

    const between = await runIn(redis.url, 'fifo-n', ['-n'], ['sh', '-c', `echo n >>${file}`]).result;
    expect(between.code, between.stderr).toBe(75);
    // The premise held throughout: the stopped waiter's place was still valid after -n, and -n did not queue.
    expect(await lineOf(client, 'fifo-n')).toEqual([placed]);
  } finally {
    waiter.process.kill('SIGCONT');
  }
  expect((await waiter.result).code).toBe(0);
  expect(order(file)).toEqual([0]);

  // A free key with an empty line: -n takes it.
  const free = await runIn(redis.url, 'fifo-n', ['-n'], ['sh', '-c', `echo n >>${file}`]).result;
  expect(free.code, free.stderr).toBe(0);
  eventOf(free, 'acquired');
  expect(readFileSync(file, 'utf8')).toBe('0\nn\n');
});

test('a waiter whose --wait runs out leaves the line at once (75); the one behind it moves up', async () => {
  const file = join(tempDir(), 'order');
  const holder = hold('fifo-wait', { redis: redis.url });
  await holder.child();
  const impatient = appender('fifo-wait', file, 0, ['--wait', '4s']);
  expect((await inLine(impatient)).place).toBe(1);
  const patient = appender('fifo-wait', file, 1);
  expect((await inLine(patient)).place).toBe(2);
  const gaveUp = await impatient.result;
  expect(gaveUp.code, gaveUp.stderr).toBe(75);
  expect(await lineOf(client, 'fifo-wait')).toHaveLength(1);
  holder.stop();
  expect((await holder.result).code).toBe(0);
  expect((await patient.result).code).toBe(0);
  expect(order(file)).toEqual([1]);
});

test('release --force --now with a line: the first waiter enters at once, the others stay in line', async () => {
  const file = join(tempDir(), 'order');
  const holder = hold('fifo-now', { redis: redis.url, flags: ['-t', '6s', '--on-lost', 'ignore'] });
  await holder.child();
  const first = appender('fifo-now', file, 0);
  expect((await inLine(first)).place).toBe(1);
  const second = runIn(
    redis.url,
    'fifo-now',
    [],
    ['sh', '-c', `echo 1 >>${file}; while [ ! -e ${file}.stop ]; do sleep 0.01; done`],
  );
  expect((await inLine(second)).place).toBe(2);
  const third = appender('fifo-now', file, 2);
  expect((await inLine(third)).place).toBe(3);

  const forced = await dlock(['release', '--force', '--now', '--log-format', 'json', '--redis', redis.url, 'fifo-now']);
  expect(forced.code, forced.stderr).toBe(0);
  const entered = await first.result;
  expect(entered.code).toBe(0);
  const gap = eventOf(entered, 'acquired').ts_ms - eventOf(forced, 'force-released').ts_ms;
  console.log(
    `release --force --now: the first waiter acquired ${gap.toFixed(1)}ms after the force-released event (the holder's TTL is 6s)`,
  );
  expect(gap).toBeLessThan(1_000);
  // The second follows the first; the third is still in line behind it.
  await second.waitFor('"event":"acquired"');
  expect(await lineOf(client, 'fifo-now')).toHaveLength(1);
  writeFileSync(`${file}.stop`, '');
  expect((await second.result).code).toBe(0);
  expect((await third.result).code).toBe(0);
  expect(order(file)).toEqual([0, 1, 2]);
  await holder.waitFor('"event":"lost"');
  holder.stop();
  expect((await holder.result).code).toBe(76);
});
