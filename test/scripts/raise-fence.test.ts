// lua/raise-fence.lua through its handle: while we hold the lock, the counter becomes the larger
// of itself and our token, and the hash shows our token; otherwise nothing changes.

import { expect, test } from 'vitest';
import { raiseFenceScript } from '../../src/backends/redis/lock/fence.js';
import { useScriptServer } from '../helpers/scripts.js';

const server = useScriptServer();

test('ours: the counter raised to T, the hash shows T', async () => {
  const keys = server.fresh();
  await server.redis().hset(keys.lock, 'owner', 'a', 'fence', '5');
  await server.redis().set(keys.fence, '5');
  expect(await server.run(raiseFenceScript, keys, { owner: 'a', fence: '9' })).toBe(true);
  expect(await server.redis().get(keys.fence)).toBe('9');
  expect(await server.redis().hget(keys.lock, 'fence')).toBe('9');
});

test('a counter past T stays; decimals past 2^53 compared exactly', async () => {
  const keys = server.fresh();
  await server.redis().hset(keys.lock, 'owner', 'a', 'fence', '1');
  await server.redis().set(keys.fence, '12');
  expect(await server.run(raiseFenceScript, keys, { owner: 'a', fence: '9' })).toBe(true);
  expect(await server.redis().get(keys.fence)).toBe('12');
  await server.redis().set(keys.fence, '9007199254740993');
  expect(await server.run(raiseFenceScript, keys, { owner: 'a', fence: '9007199254740995' })).toBe(true);
  expect(await server.redis().get(keys.fence)).toBe('9007199254740995');
});

test('not ours (or gone): false, nothing changed', async () => {
  const keys = server.fresh();
  await server.redis().hset(keys.lock, 'owner', 'b', 'fence', '5');
  await server.redis().set(keys.fence, '5');
  expect(await server.run(raiseFenceScript, keys, { owner: 'a', fence: '9' })).toBe(false);
  expect(await server.redis().get(keys.fence)).toBe('5');
  expect(await server.redis().hget(keys.lock, 'fence')).toBe('5');
  expect(await server.run(raiseFenceScript, server.fresh(), { owner: 'a', fence: '9' })).toBe(false);
});

test('a fence that is not a token (leading zero, not digits) is refused by the handle, never sent', async () => {
  const keys = server.fresh();
  await server.redis().hset(keys.lock, 'owner', 'a', 'fence', '5');
  await server.redis().set(keys.fence, '5');
  for (const fence of ['09', 'x', '']) {
    await expect(server.run(raiseFenceScript, keys, { owner: 'a', fence })).rejects.toThrow(
      `refusing to raise the fence counter to ${JSON.stringify(fence)}`,
    );
  }
  expect(await server.redis().get(keys.fence)).toBe('5');
  expect(await server.redis().hget(keys.lock, 'fence')).toBe('5');
});
