// Redlock renewal re-takes an instance that lost the key (restarted without persistence, an
// eviction) while a majority still holds it for this owner: the key comes back with our owner
// and the instance's fence counter is raised to the held token. Never on a minority view, never
// over another owner's key, never with one instance (there a lost key means lost).

import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import {
  childEnv,
  childPid,
  events,
  hold,
  isAlive,
  killLeftovers,
  onlyEvent,
  removeTempDirs,
  tempDir,
} from '../fixtures/observe.js';
import { startServers, type RedisServer } from '../../support/redis-server.mjs';
import { waitUntil } from '../../support/wait-until.mjs';
import { heal, waitForEvents, waitForMoreEvents } from '../helpers/redlock.js';

const TTL_MS = 1_000;
const HOLD_FLAGS = ['-t', `${TTL_MS}ms`, '--kill-after', '200ms'];

let servers: RedisServer[];
let clients: Redis[];

// No persistence: a restarted instance comes back empty (lock and fence counter gone).
beforeAll(async () => {
  servers = await startServers(5);
  clients = servers.map((server) => server.client());
});
afterEach(async () => {
  killLeftovers();
  await heal(servers);
});
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
  removeTempDirs();
});

const owner = (i: number, lock: string) => clients[i].hget(lock, 'owner').catch(() => null);

test('three of five instances restarted empty one at a time: each is re-taken, the job ends 0', async () => {
  const key = 'rolling-restart';
  const lock = `dlock:{${key}}`;
  const dir = tempDir();
  const holder = hold(key, { redis: servers.map((s) => s.url), dir, flags: HOLD_FLAGS });
  const pid = await childPid(dir);
  const { DLOCK_TOKEN: token, DLOCK_FENCING_TOKEN: fence } = await childEnv(dir);

  for (const i of [0, 1, 2]) {
    await servers[i].restart();
    // Not checked empty here: a renewal can re-take it before this test's client has reconnected.
    // The 'retaken' events checked below say each came back empty and was taken again.
    // Back with our owner before the next one goes (at most a renewal or two later).
    await waitUntil(`instance ${i} re-taken`, async () => (await owner(i, lock)) === token, { timeoutMs: 5 * TTL_MS });
    const counter = await clients[i].get(`${lock}:fence`);
    expect(BigInt(counter ?? '0'), `fence counter on restarted instance ${i}`).toBeGreaterThanOrEqual(BigInt(fence));
    expect(await clients[i].hget(lock, 'fence')).toBe(fence);
    const pttl = await clients[i].pttl(lock);
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(TTL_MS);
    expect(isAlive(pid)).toBe(true);
  }
  // Two more renewals by all five.
  await waitForMoreEvents(holder, 'renewed', 2);
  holder.stop();
  const result = await holder.result;
  expect(result.code, result.stderr).toBe(0);
  expect(events(result.stderr, 'lost')).toEqual([]);
  expect(events(result.stderr, 'retaken').map((e) => e.instance)).toEqual([0, 1, 2].map((i) => servers[i].url));
  expect(onlyEvent(result.stderr, 'released').released).toBe(true);
  for (const i of [0, 1, 2])
    expect(BigInt((await clients[i].get(`${lock}:fence`)) ?? '0')).toBeGreaterThanOrEqual(BigInt(fence));
  expect(await Promise.all(clients.map((client) => client.exists(lock)))).toEqual([0, 0, 0, 0, 0]);
});

test("another owner's key on a minority instance is left alone", async () => {
  const key = 'foreign';
  const lock = `dlock:{${key}}`;
  const dir = tempDir();
  const holder = hold(key, { redis: servers.map((s) => s.url), dir, flags: HOLD_FLAGS });
  await childPid(dir);
  await waitForEvents(holder, 'renewed', 1);
  // Instance 0 lost our key and someone else's attempt landed there (it holds no majority).
  await clients[0].del(lock);
  await clients[0].hset(lock, 'owner', 'someone-else', 'fence', '1');
  await clients[0].pexpire(lock, 60_000);
  await waitForMoreEvents(holder, 'renewed', 2);
  expect(await clients[0].hget(lock, 'owner')).toBe('someone-else');
  expect(events(holder.stderr(), 'retaken')).toEqual([]);
  expect(events(holder.stderr(), 'degraded').at(-1)).toMatchObject({ failing: servers[0].url });
  holder.stop();
  const result = await holder.result;
  expect(result.code, result.stderr).toBe(0);
  await clients[0].del(lock);
});

test('a minority view never re-creates: with a majority down, an instance restarted empty stays empty', async () => {
  const key = 'minority';
  const lock = `dlock:{${key}}`;
  const dir = tempDir();
  const holder = hold(key, { redis: servers.map((s) => s.url), dir, flags: HOLD_FLAGS });
  await childPid(dir);
  await waitForEvents(holder, 'renewed', 1);
  await Promise.all([0, 1, 2].map((i) => servers[i].stop()));
  await servers[3].restart();
  let seen = 0;
  const done = holder.result.then(() => true);
  while (!(await Promise.race([done, new Promise((resolve) => setTimeout(() => resolve(false), 10))])))
    seen += await clients[3].exists(lock).catch(() => 0);
  const result = await holder.result;
  expect(result.code, result.stderr).toBe(76);
  expect(seen).toBe(0);
  expect(events(result.stderr, 'retaken')).toEqual([]);
});

test('one instance: a restart without persistence loses the lock (76), it is not re-created', async () => {
  const key = 'single';
  const lock = `dlock:{${key}}`;
  const dir = tempDir();
  const holder = hold(key, { redis: [servers[4]].map((s) => s.url), dir, flags: HOLD_FLAGS });
  await childPid(dir);
  await waitForEvents(holder, 'renewed', 1);
  await servers[4].restart();
  const result = await holder.result;
  expect(result.code, result.stderr).toBe(76);
  expect(onlyEvent(result.stderr, 'lost').reason).toBe('refused');
  expect(events(result.stderr, 'retaken')).toEqual([]);
  expect(await clients[4].exists(lock)).toBe(0);
});
