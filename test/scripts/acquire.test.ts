// lua/acquire.lua through its handle: a free lock is taken with the next fencing token, a held one
// is left alone, a retried request of ours is answered again, a foreign key is refused.

import { expect, test } from 'vitest';
import { acquireScript } from '../../src/backends/redis/lock/acquire.js';
import { META, useScriptServer } from '../helpers/scripts.js';

const server = useScriptServer();
const input = (owner: string) => ({ owner, ttlMs: 30_000, meta: META });

test('a free lock: taken with the next token, the holder written (since_ms on the server clock), the lease set', async () => {
  const keys = server.fresh();
  const before = await server.serverMs();
  expect(await server.run(acquireScript, keys, input('a'))).toEqual({ acquired: true, fence: '1' });
  const after = await server.serverMs();
  const hash = await server.redis().hgetall(keys.lock);
  expect(Number(hash.since_ms)).toBeGreaterThanOrEqual(before);
  expect(Number(hash.since_ms)).toBeLessThanOrEqual(after);
  expect(hash).toEqual({
    owner: 'a',
    fence: '1',
    host: 'host-a',
    pid: '4242',
    cmd: 'make deploy',
    since_ms: hash.since_ms,
    ttl_ms: '30000',
  });
  expect(await server.redis().pttl(keys.lock)).toBeGreaterThan(29_000);
  expect(await server.redis().get(keys.fence)).toBe('1');
});

test('the counter goes on from where it is', async () => {
  const keys = server.fresh();
  await server.redis().set(keys.fence, '41');
  expect(await server.run(acquireScript, keys, input('a'))).toEqual({ acquired: true, fence: '42' });
  expect(await server.redis().get(keys.fence)).toBe('42');
});

test('already ours (a retry that landed late): the same token, the lease renewed, no new token', async () => {
  const keys = server.fresh();
  await server.run(acquireScript, keys, input('a'));
  await server.redis().pexpire(keys.lock, 1_000);
  expect(await server.run(acquireScript, keys, input('a'))).toEqual({ acquired: true, fence: '1' });
  expect(await server.redis().pttl(keys.lock)).toBeGreaterThan(29_000);
  expect(await server.redis().get(keys.fence)).toBe('1');
});

test("someone else's: not acquired, its owner and time left said, nothing changed", async () => {
  const keys = server.fresh();
  await server.run(acquireScript, keys, input('a'));
  const reply = await server.run(acquireScript, keys, input('b'));
  expect(reply).toMatchObject({ acquired: false, owner: 'a' });
  expect(reply.acquired === false && reply.pttlMs).toBeGreaterThan(29_000);
  expect(await server.redis().hget(keys.lock, 'owner')).toBe('a');
  expect(await server.redis().get(keys.fence)).toBe('1');
});

test('a key of another type: refused naming it, the counter untouched', async () => {
  const keys = server.fresh();
  await server.redis().set(keys.lock, 'hello');
  await expect(server.run(acquireScript, keys, input('a'))).rejects.toThrow(`the key ${keys.lock} holds a string`);
  expect(await server.redis().exists(keys.fence)).toBe(0);
});
