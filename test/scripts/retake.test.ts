// lua/retake.lua through its handle: our lock put back where it was lost, the counter raised to
// our token, someone else's key left alone.

import { expect, test } from 'vitest';
import { now } from '../../src/clock.js';
import { retakeScript } from '../../src/backends/redis/lock/retake.js';
import { META, useScriptServer } from '../helpers/scripts.js';

const server = useScriptServer();
// Held for 90 s (on this host's monotonic clock) when re-taken.
const input = (owner: string, fence = '9') => ({
  owner,
  leftMs: 20_000.7,
  ttlMs: 30_000,
  held: { fence, meta: META, startedAt: now() - 90_000 },
});

test('lost: re-created with our token and what is left of the lease, the counter raised to it', async () => {
  const keys = server.fresh();
  await server.redis().set(keys.fence, '3');
  const before = await server.serverMs();
  expect(await server.run(retakeScript, keys, input('a'))).toBe(true);
  const after = await server.serverMs();
  const hash = await server.redis().hgetall(keys.lock);
  // since_ms: the server's time less how long we have held it.
  expect(Number(hash.since_ms)).toBeGreaterThanOrEqual(before - 90_000 - 50);
  expect(Number(hash.since_ms)).toBeLessThanOrEqual(after - 90_000 + 50);
  expect(hash).toEqual({
    owner: 'a',
    fence: '9',
    host: 'host-a',
    pid: '4242',
    cmd: 'make deploy',
    since_ms: hash.since_ms,
    ttl_ms: '30000',
  });
  const pttl = await server.redis().pttl(keys.lock);
  expect(pttl).toBeGreaterThan(19_000);
  expect(pttl).toBeLessThanOrEqual(20_000);
  expect(await server.redis().get(keys.fence)).toBe('9');
});

test('a counter already past our token stays (compared as decimals, not as doubles)', async () => {
  const keys = server.fresh();
  await server.redis().set(keys.fence, '10');
  expect(await server.run(retakeScript, keys, input('a', '9'))).toBe(true);
  expect(await server.redis().get(keys.fence)).toBe('10');
  const big = server.fresh();
  await server.redis().set(big.fence, '9007199254740993');
  expect(await server.run(retakeScript, big, input('a', '9007199254740995'))).toBe(true);
  expect(await server.redis().get(big.fence)).toBe('9007199254740995');
});

test('still ours: true, nothing rewritten', async () => {
  const keys = server.fresh();
  await server.redis().hset(keys.lock, 'owner', 'a', 'fence', '5');
  expect(await server.run(retakeScript, keys, input('a'))).toBe(true);
  expect(await server.redis().hget(keys.lock, 'fence')).toBe('5');
  expect(await server.redis().exists(keys.fence)).toBe(0);
});

test("someone else's: false, never overwritten", async () => {
  const keys = server.fresh();
  await server.redis().hset(keys.lock, 'owner', 'b', 'fence', '12');
  expect(await server.run(retakeScript, keys, input('a'))).toBe(false);
  expect(await server.redis().hgetall(keys.lock)).toEqual({ owner: 'b', fence: '12' });
});
