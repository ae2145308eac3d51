// lua/extend-holder.lua through its handle: one holder of --slots/--shared renewed; a holder that
// is gone or was closed by release --force is refused and (asked to) the loss recorded.

import { expect, test } from 'vitest';
import type { LockKeys } from '../../src/backends/redis/lock/keys.js';
import { enterScript, extendHolderScript } from '../../src/backends/redis/lock/line.js';
import { entering, META, useScriptServer } from '../helpers/scripts.js';

const server = useScriptServer();
const record = { ...META, fence: '1' };

async function slotHolder(owner: string, keys: LockKeys = server.fresh()) {
  await server.run(enterScript, keys, entering(owner, { kind: 'slots', slots: 2 }, { ttlMs: 2_000 }));
  return keys;
}

test('a holder: its lease end moved ttl ahead, the keys kept as long', async () => {
  const keys = await slotHolder('a');
  const before = Number(await server.redis().zscore(keys.holders, 'a'));
  expect(await server.run(extendHolderScript, keys, { owner: 'a', ttlMs: 60_000, record })).toBe(true);
  expect(Number(await server.redis().zscore(keys.holders, 'a'))).toBeGreaterThan(before + 50_000);
  expect(await server.redis().pttl(keys.lock)).toBeGreaterThan(59_000);
  expect(await server.history(keys)).toHaveLength(1); // "acquired" only
});

test('not a holder: refused, never re-created; the loss recorded as expired', async () => {
  const keys = await slotHolder('a');
  expect(await server.run(extendHolderScript, keys, { owner: 'b', ttlMs: 60_000 })).toBe(false);
  expect(await server.run(extendHolderScript, keys, { owner: 'b', ttlMs: 60_000, record })).toBe(false);
  expect(await server.redis().zscore(keys.holders, 'b')).toBeNull();
  expect((await server.history(keys)).at(-1)).toEqual({
    event: 'lost',
    host: 'host-a',
    pid: '4242',
    cmd: 'make deploy',
    fence: '1',
    why: 'expired',
  });
});

test('closed by release --force (renamed "!<owner>"): refused, recorded as forced', async () => {
  const keys = await slotHolder('a');
  await server.redis().hset(keys.lock, 'h:!a', '{}');
  await server.redis().hdel(keys.lock, 'h:a');
  expect(await server.run(extendHolderScript, keys, { owner: 'a', ttlMs: 60_000, record })).toBe(false);
  expect((await server.history(keys)).at(-1)).toMatchObject({ event: 'lost', why: 'forced' });
});

test("the job's progress: max_hold_ms and beat_ms stored in the holder's details, the rest kept", async () => {
  const keys = await slotHolder('a');
  const progress = { maxHoldMs: 60_000, beatAgeMs: 4_000 };
  const before = await server.serverMs();
  expect(await server.run(extendHolderScript, keys, { owner: 'a', ttlMs: 60_000, progress })).toBe(true);
  const after = await server.serverMs();
  const details = JSON.parse((await server.redis().hget(keys.lock, 'h:a'))!);
  expect(details).toMatchObject({ max_hold_ms: '60000', host: 'host-a', slot: '0' });
  // beat_ms: the server's time less the age the holder measured (4 s).
  expect(Number(details.beat_ms)).toBeGreaterThanOrEqual(before - 4_000);
  expect(Number(details.beat_ms)).toBeLessThanOrEqual(after - 4_000);
});
