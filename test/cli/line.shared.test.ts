// --shared (docs/reference/waiting-in-line.md, flock -s): shared holders together, never with an
// exclusive one, and neither starves: a writer in line blocks the readers that queue after it,
// and the readers queued behind a writer all get in together once it is done. Real
// redis-server and dlock processes; times from the processes' own timestamps.

import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { expect, test } from 'vitest';
import { RedisServer } from '../../support/redis-server.mjs';
import { events, hold, isAlive, tempDir, type Held } from '../fixtures/observe.js';
import { dlock } from '../helpers/cli.js';
import { eventOf, inLine, lineOf, overlap, runIn, section, sections } from '../helpers/line.js';
import { useRedisServer } from '../helpers/server.js';

let redis: RedisServer;
let client: Redis;
useRedisServer((server) => {
  redis = server;
  client = server.client();
});

function reader(key: string): Held {
  return hold(key, { redis: redis.url, flags: ['--shared'] });
}

function writer(key: string): Held {
  return hold(key, { redis: redis.url });
}

/** The child pids of holders whose children all run now, or a failure naming who does not. */
async function allRunning(holders: Held[]): Promise<number[]> {
  const pids = await Promise.all(holders.map(async (h) => (await h.child()).pid));
  expect(pids.map(isAlive)).toEqual(pids.map(() => true));
  return pids;
}

function acquiredYet(held: Held): boolean {
  return events(held.stderr(), 'acquired').length > 0;
}

test('shared holders hold together; an exclusive -n is busy, a shared -n joins them', async () => {
  const readers: Held[] = [];
  for (let i = 0; i < 3; i++) {
    const r = reader('readers');
    await r.child();
    readers.push(r);
  }
  // All three commands run at the same time: none was stopped yet.
  await allRunning(readers);
  expect(readers.map((r) => eventOf(r.stderr(), 'acquired').shared)).toEqual([true, true, true]);

  const exclusive = await dlock(['run', '--redis', redis.url, '-n', 'readers', '--', 'true']);
  expect(exclusive.code, exclusive.stderr).toBe(75);
  const shared = await dlock(['run', '--redis', redis.url, '-n', '--shared', 'readers', '--', 'true']);
  expect(shared.code, shared.stderr).toBe(0);

  for (const r of readers) r.stop();
  for (const r of readers) expect((await r.result).code).toBe(0);
  expect(await client.exists('dlock:{readers}', 'dlock:{readers}:holders')).toBe(0);
});

test('8 readers and 4 writers started together: a writer never runs beside anyone, every one runs', async () => {
  const log = join(tempDir(), 'sections');
  const runs = Array.from({ length: 12 }, (_, i) => {
    const shared = i % 3 !== 2;
    return runIn(redis.url, 'mixed', shared ? ['--shared'] : [], section(log, shared ? `R${i}` : `W${i}`, 0.2));
  });
  const results = await Promise.all(runs.map((r) => r.result));
  expect(results.map((r) => r.code)).toEqual(Array(12).fill(0));
  const ran = sections(log);
  expect(ran.map((s) => s.label).sort()).toEqual(runs.map((_, i) => (i % 3 !== 2 ? `R${i}` : `W${i}`)).sort());
  const writers = ran.filter((s) => s.label.startsWith('W'));
  for (const w of writers)
    for (const other of ran) if (other !== w) expect(overlap(w, other), `${w.label} beside ${other.label}`).toBe(false);
  const readers = ran.filter((s) => s.label.startsWith('R'));
  const pairs = readers.flatMap((a, i) => readers.slice(i + 1).filter((b) => overlap(a, b))).length;
  console.log(`8 readers, 4 writers: no writer beside anyone; ${pairs} pairs of readers ran at the same time`);
});

test('neither starves: a queued writer goes before readers arriving after it; the readers behind it get in together, before a later writer', async () => {
  const key = 'fair';
  const [r1, r2] = [reader(key), reader(key)];
  await allRunning([r1, r2]);

  const w1 = writer(key);
  expect((await inLine(w1)).place).toBe(1);
  // Readers keep arriving while the writer waits: they queue behind it instead of joining the holders.
  const late: Held[] = [];
  for (const place of [2, 3]) {
    const r = reader(key);
    expect((await inLine(r)).place, r.stderr()).toBe(place);
    late.push(r);
  }
  r1.stop();
  expect((await r1.result).code).toBe(0);
  const r5 = reader(key);
  expect((await inLine(r5)).place, r5.stderr()).toBe(4);
  late.push(r5);
  const w2 = writer(key);
  expect((await inLine(w2)).place).toBe(5);

  // The last reader holding goes: the writer gets in, none of the later readers does.
  // (A holder's "released" is logged after the reply, so the next one's "acquired" may come
  // first: entering is compared with the moment the holder was told to stop.)
  const r2Stopped = Date.now();
  r2.stop();
  expect((await r2.result).code).toBe(0);
  await w1.child();
  expect(eventOf(w1.stderr(), 'acquired').ts_ms).toBeGreaterThanOrEqual(r2Stopped);
  expect(late.filter(acquiredYet)).toEqual([]);
  expect(await lineOf(client, key)).toHaveLength(4);

  // The writer is done: the three readers queued behind it get in together (all run at once),
  // and the later writer waits for all of them.
  const w1Stopped = Date.now();
  w1.stop();
  const w1Result = await w1.result;
  expect(w1Result.code).toBe(0);
  await allRunning(late);
  const w1Released = eventOf(w1Result, 'released').ts_ms;
  const entered = late.map((r) => eventOf(r.stderr(), 'acquired').ts_ms - w1Released);
  console.log(
    `3 readers behind a writer acquired ${entered.map((g) => `${g.toFixed(1)}ms`).join(', ')} after its "released" event`,
  );
  for (const r of late) expect(eventOf(r.stderr(), 'acquired').ts_ms).toBeGreaterThanOrEqual(w1Stopped);
  // All woken by that release, not one after another by their polls.
  for (const gap of entered) expect(Math.abs(gap)).toBeLessThan(1_000);
  expect(Math.max(...entered) - Math.min(...entered)).toBeLessThan(500);
  expect(acquiredYet(w2)).toBe(false);
  expect(await lineOf(client, key)).toHaveLength(1);

  // One reader stopping is not enough for the writer behind them.
  late[0].stop();
  expect((await late[0].result).code).toBe(0);
  expect(acquiredYet(w2)).toBe(false);
  const lastStopped = Date.now();
  for (const r of late.slice(1)) r.stop();
  expect((await Promise.all(late.slice(1).map((r) => r.result))).map((r) => r.code)).toEqual([0, 0]);
  await w2.child();
  expect(eventOf(w2.stderr(), 'acquired').ts_ms).toBeGreaterThanOrEqual(lastStopped);
  w2.stop();
  expect((await w2.result).code).toBe(0);
});
