// lua/extend.lua through its handle: the owner's lease is renewed; any other renewal is refused,
// never re-creates the lock, and (asked to) records why it was lost.

import { expect, test } from 'vitest';
import { acquireScript } from '../../src/backends/redis/lock/acquire.js';
import { extendScript } from '../../src/backends/redis/lock/extend.js';
import { META, useScriptServer } from '../helpers/scripts.js';

const server = useScriptServer();
const record = { ...META, fence: '7' };

async function held(owner = 'a') {
  const keys = server.fresh();
  await server.run(acquireScript, keys, { owner, ttlMs: 2_000, meta: META, sinceMs: 0 });
  return keys;
}

test('ours: renewed to the new ttl, nothing recorded', async () => {
  const keys = await held();
  expect(await server.run(extendScript, keys, { owner: 'a', ttlMs: 60_000, record })).toBe(true);
  expect(await server.redis().pttl(keys.lock)).toBeGreaterThan(59_000);
  expect(await server.history(keys)).toEqual([]);
});

test('not ours: refused, the lease untouched; without a record nothing is written', async () => {
  const keys = await held();
  expect(await server.run(extendScript, keys, { owner: 'b', ttlMs: 60_000 })).toBe(false);
  expect(await server.redis().pttl(keys.lock)).toBeLessThanOrEqual(2_000);
  expect(await server.redis().exists(keys.history)).toBe(0);
});

test('gone: refused, never re-created, the loss recorded as expired', async () => {
  const keys = server.fresh();
  expect(await server.run(extendScript, keys, { owner: 'a', ttlMs: 60_000, record })).toBe(false);
  expect(await server.redis().exists(keys.lock)).toBe(0);
  expect(await server.history(keys)).toEqual([
    { event: 'lost', host: 'host-a', pid: '4242', cmd: 'make deploy', fence: '7', why: 'expired' },
  ]);
});

test('closed by release --force (owner ""): forced; held by another: taken', async () => {
  const keys = await held();
  await server.redis().hset(keys.lock, 'owner', '');
  expect(await server.run(extendScript, keys, { owner: 'a', ttlMs: 60_000, record })).toBe(false);
  await server.redis().hset(keys.lock, 'owner', 'b');
  expect(await server.run(extendScript, keys, { owner: 'a', ttlMs: 60_000, record })).toBe(false);
  expect((await server.history(keys)).map((entry) => entry.why)).toEqual(['forced', 'taken']);
});

test("the job's progress: max_hold_ms and beat_ms stored in the hash while ours, left as they are when not given", async () => {
  const keys = await held();
  const progress = { maxHoldMs: 7_200_000, beatAgeMs: 4_000 };
  const before = await server.serverMs();
  expect(await server.run(extendScript, keys, { owner: 'a', ttlMs: 60_000, progress })).toBe(true);
  const after = await server.serverMs();
  const [maxHold, beat] = await server.redis().hmget(keys.lock, 'max_hold_ms', 'beat_ms');
  expect(maxHold).toBe('7200000');
  // beat_ms: the server's time less the age the holder measured (4 s).
  expect(Number(beat)).toBeGreaterThanOrEqual(before - 4_000);
  expect(Number(beat)).toBeLessThanOrEqual(after - 4_000);
  expect(await server.run(extendScript, keys, { owner: 'a', ttlMs: 60_000, progress: {} })).toBe(true);
  expect(await server.redis().hmget(keys.lock, 'max_hold_ms', 'beat_ms')).toEqual([maxHold, beat]);
  expect(await server.run(extendScript, keys, { owner: 'b', ttlMs: 60_000, progress: { maxHoldMs: 1 } })).toBe(false);
  expect(await server.redis().hget(keys.lock, 'max_hold_ms')).toBe('7200000');
});
