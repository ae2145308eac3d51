// lua/extend-holder.lua through its handle: one holder of --slots/--shared renewed; a holder that
// is gone or was closed by release --force is refused and (asked to) the loss recorded.

import { expect, test } from 'vitest';
import type { LockKeys } from '../../src/lock/keys.js';
import { enterScript, extendHolderScript } from '../../src/lock/line.js';
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
