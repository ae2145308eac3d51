// lua/force-release.lua through its handle (`release --force`): whoever holds the lock is removed,
// at once ("now") or closed until its lease runs out, and each removal is recorded.

import { expect, test } from 'vitest';
import { forceReleaseScript } from '../../src/backends/redis/lock/inspect.js';
import { enterScript } from '../../src/backends/redis/lock/line.js';
import type { HoldMode } from '../../src/backend/mode.js';
import { entering, publishedOn, useScriptServer } from '../helpers/scripts.js';

const server = useScriptServer();
const by = { host: 'ops', pid: 99 };

test('nothing held: nothing removed', async () => {
  expect(await server.run(forceReleaseScript, server.fresh(), { now: true, ...by })).toEqual({
    holders: [],
    closedForMs: 0,
    serverMs: expect.any(Number),
  });
});

test('close: the exclusive holder\'s owner blanked until its lease ends, "forced" recorded', async () => {
  const keys = server.fresh();
  await server.run(enterScript, keys, entering('a'));
  const before = await server.serverMs();
  const reply = await server.run(forceReleaseScript, keys, { now: false, ...by });
  const after = await server.serverMs();
  expect(reply.holders).toMatchObject([{ owner: 'a', fence: '1', host: 'host-a' }]);
  expect(reply.closedForMs).toBeGreaterThan(29_000);
  // The server's time, stamped as forced_ms and answered (what the removed holder's age counts to).
  expect(reply.serverMs).toBeGreaterThanOrEqual(before);
  expect(reply.serverMs).toBeLessThanOrEqual(after);
  expect(await server.redis().hgetall(keys.lock)).toMatchObject({ owner: '', forced_ms: String(reply.serverMs) });
  expect((await server.history(keys)).at(-1)).toEqual({
    event: 'forced',
    host: 'host-a',
    pid: '4242',
    cmd: 'make deploy',
    fence: '1',
    slot: '-1',
    by_host: 'ops',
    by_pid: '99',
    now: 'false',
  });
});

test('now: deleted at once', async () => {
  const keys = server.fresh();
  await server.run(enterScript, keys, entering('a'));
  expect(await server.run(forceReleaseScript, keys, { now: true, ...by })).toMatchObject({ closedForMs: 0 });
  expect(await server.redis().exists(keys.lock)).toBe(0);
  expect((await server.history(keys)).at(-1)).toMatchObject({ event: 'forced', now: 'true' });
});

test('one slot of --slots, closed: only that holder renamed "!<owner>", its slot kept taken', async () => {
  const keys = server.fresh();
  const slots: HoldMode = { kind: 'slots', slots: 2 };
  await server.run(enterScript, keys, entering('a', slots));
  await server.run(enterScript, keys, entering('b', slots));
  const reply = await server.run(forceReleaseScript, keys, { now: false, slot: 1, ...by });
  expect(reply.holders).toMatchObject([{ fence: '2', slot: 1 }]);
  expect(reply.closedForMs).toBeGreaterThan(29_000);
  const hash = await server.redis().hgetall(keys.lock);
  expect(Object.keys(hash).sort()).toEqual(['h:!b', 'h:a', 'mode', 's:0', 's:1', 'slots']);
  expect(hash['s:1']).toBe('!b');
  expect((await server.redis().zrange(keys.holders, 0, -1)).sort()).toEqual(['!b', 'a']);
});

test('--shared, closed: forced again, the closed holder is listed (not removed again); --now opens the key', async () => {
  const keys = server.fresh();
  await server.run(enterScript, keys, entering('a', { kind: 'shared' }));
  const first = await server.run(forceReleaseScript, keys, { now: false, ...by });
  expect(first.holders).toMatchObject([{ fence: '1', forcedMs: 0 }]);
  const again = await server.run(forceReleaseScript, keys, { now: false, ...by });
  expect(again.holders).toMatchObject([{ owner: '', fence: '1', forcedMs: first.serverMs }]);
  expect(again.closedForMs).toBeGreaterThan(29_000);
  expect(await server.redis().zrange(keys.holders, 0, -1)).toEqual(['!a']);
  const woken = await publishedOn(server.redis(), `${keys.wakePrefix}w`, async () => {
    await server.run(enterScript, keys, entering('w', { kind: 'shared' }));
    expect(await server.run(forceReleaseScript, keys, { now: true, ...by })).toMatchObject({
      holders: [{ owner: '', fence: '1' }],
      closedForMs: 0,
    });
  });
  expect(woken).toBe('go');
  expect(await server.redis().exists(keys.lock, keys.holders)).toBe(0);
});

test('--slots, one slot closed: --now --slot opens that slot only', async () => {
  const keys = server.fresh();
  const slots: HoldMode = { kind: 'slots', slots: 2 };
  await server.run(enterScript, keys, entering('a', slots));
  await server.run(enterScript, keys, entering('b', slots));
  await server.run(forceReleaseScript, keys, { now: false, slot: 1, ...by });
  expect(await server.run(forceReleaseScript, keys, { now: true, slot: 1, ...by })).toMatchObject({
    holders: [{ owner: '', slot: 1 }],
  });
  const hash = await server.redis().hgetall(keys.lock);
  expect(Object.keys(hash).sort()).toEqual(['h:a', 'mode', 's:0', 'slots']);
  expect(await server.redis().zrange(keys.holders, 0, -1)).toEqual(['a']);
});
