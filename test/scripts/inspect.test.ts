// lua/inspect.lua through its handle: the whole state of a lock on one instance, read only.

import { expect, test } from 'vitest';
import { inspectScript } from '../../src/backends/redis/lock/inspect.js';
import type { LockKeys } from '../../src/backends/redis/lock/keys.js';
import { INSPECT_MAX_BYTES } from '../../src/backends/redis/lock/limits.js';
import { enterScript } from '../../src/backends/redis/lock/line.js';
import { entering, useScriptServer } from '../helpers/scripts.js';

const server = useScriptServer();

test('a lock never taken: nothing held, counter 0, nobody in line; the server time of the read', async () => {
  const before = await server.serverMs();
  const state = await server.run(inspectScript, server.fresh(), undefined);
  const after = await server.serverMs();
  expect(state).toEqual({
    holder: undefined,
    holders: [],
    mode: { kind: 'exclusive' },
    ttlLeftMs: -2,
    counter: '0',
    line: [],
    lineLength: 0,
    serverMs: expect.any(Number),
  });
  expect(state.serverMs).toBeGreaterThanOrEqual(before);
  expect(state.serverMs).toBeLessThanOrEqual(after);
});

test('an exclusive holder and a line: who holds it, for how long, who waits; nothing changed', async () => {
  const keys = server.fresh();
  await server.run(enterScript, keys, entering('a', { kind: 'exclusive' }));
  await server.run(enterScript, keys, entering('b', { kind: 'exclusive' }));
  const before = await server.redis().hgetall(keys.lock);
  const state = await server.run(inspectScript, keys, undefined);
  expect(state).toMatchObject({ holder: { owner: 'a', fence: '1', host: 'host-a', pid: '4242' }, counter: '1' });
  expect(state).toMatchObject({
    mode: { kind: 'exclusive' },
    lineLength: 1,
    line: [{ mode: 'exclusive', host: 'host-a' }],
  });
  expect(state.ttlLeftMs).toBeGreaterThan(29_000);
  expect(await server.redis().hgetall(keys.lock)).toEqual(before);
  expect(await server.redis().zcard(keys.line)).toBe(1);
});

test('holders of --slots: each with its slot', async () => {
  const keys = server.fresh();
  await server.run(enterScript, keys, entering('a', { kind: 'slots', slots: 3 }));
  await server.run(enterScript, keys, entering('b', { kind: 'slots', slots: 3 }));
  const state = await server.run(inspectScript, keys, undefined);
  expect(state.mode).toEqual({ kind: 'slots', slots: 3 });
  expect(state.holders.map((holder) => [holder.fence, holder.slot])).toEqual([
    ['1', 0],
    ['2', 1],
  ]);
});

test('a lock holding more than INSPECT_MAX_BYTES (forged) is refused, never sent; one just under it is read', async () => {
  const redis = server.redis();
  const mib = 1024 * 1024;
  const under = server.fresh();
  await redis.hset(under.lock, { owner: 'o', cmd: 'c'.repeat(INSPECT_MAX_BYTES - mib) });
  expect((await server.run(inspectScript, under, undefined)).holder?.owner).toBe('o');
  for (const plant of [
    (keys: LockKeys) => redis.hset(keys.lock, { owner: 'o', a: 'x'.repeat(3 * mib), b: 'x'.repeat(2 * mib) }),
    (keys: LockKeys) => redis.zadd(keys.holders, 1, 'h'.repeat(INSPECT_MAX_BYTES)),
    async (keys: LockKeys) => {
      await redis.zadd(keys.line, 1, 'w');
      await redis.hset(keys.lineInfo, 'w', 'd'.repeat(INSPECT_MAX_BYTES));
    },
  ]) {
    const keys = server.fresh();
    await plant(keys);
    // The script's refusal (DLOCKTOOLARGE <bytes>), in dlock's words by the handle (tooLarge).
    await expect(server.run(inspectScript, keys, undefined)).rejects.toThrow(`the lock ${keys.lock} holds more than`);
  }
});
