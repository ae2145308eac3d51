// lua/release.lua through its handle: our hold deleted (not anyone else's), the release
// announced and the waiters that may enter woken, the history and --once-per's done mark written.

import { expect, test } from 'vitest';
import { acquireScript } from '../../src/backends/redis/lock/acquire.js';
import type { LockKeys } from '../../src/backends/redis/lock/keys.js';
import { enterScript } from '../../src/backends/redis/lock/line.js';
import type { HoldMode } from '../../src/backend/mode.js';
import { releaseScript } from '../../src/backends/redis/lock/release.js';
import { entering, META, publishedOn, useScriptServer } from '../helpers/scripts.js';

const server = useScriptServer();
const enter = (keys: LockKeys, owner: string, mode?: HoldMode) => server.run(enterScript, keys, entering(owner, mode));

test('ours: deleted, the release announced on its channel, "released" recorded with the exit status', async () => {
  const keys = server.fresh();
  await enter(keys, 'a');
  const announced = await publishedOn(server.redis(), keys.released, async () => {
    const input = { owner: 'a', notify: true, record: { exitStatus: '3', oncePerMs: 0 } };
    expect(await server.run(releaseScript, keys, input)).toBe('released');
  });
  expect(announced).toBe('a');
  expect(await server.redis().exists(keys.lock)).toBe(0);
  expect((await server.history(keys)).at(-1)).toEqual({
    event: 'released',
    host: 'host-a',
    pid: '4242',
    cmd: 'make deploy',
    fence: '1',
    slot: '-1',
    exit: '3',
    held_ms: expect.stringMatching(/^\d+$/),
  });
});

test('a reason (dlock ended the job: max-hold, heartbeat-missed) is recorded beside the exit status', async () => {
  const keys = server.fresh();
  await enter(keys, 'a');
  const input = { owner: 'a', notify: true, record: { exitStatus: '124', oncePerMs: 0, reason: 'max-hold' } };
  expect(await server.run(releaseScript, keys, input)).toBe('released');
  expect((await server.history(keys)).at(-1)).toMatchObject({ event: 'released', exit: '124', reason: 'max-hold' });
});

test('not ours: not-ours, the hash untouched, nothing recorded', async () => {
  const keys = server.fresh();
  await server.run(acquireScript, keys, { owner: 'a', ttlMs: 30_000, meta: META, sinceMs: 0 });
  expect(
    await server.run(releaseScript, keys, { owner: 'b', notify: true, record: { exitStatus: '0', oncePerMs: 0 } }),
  ).toBe('not-ours');
  expect(await server.redis().hget(keys.lock, 'owner')).toBe('a');
  expect(await server.redis().exists(keys.history)).toBe(0);
});

test('the head of the line is woken', async () => {
  const keys = server.fresh();
  await enter(keys, 'a');
  await enter(keys, 'b');
  const woken = await publishedOn(server.redis(), `${keys.wakePrefix}b`, () =>
    server.run(releaseScript, keys, { owner: 'a', notify: true }),
  );
  expect(woken).toBe('go');
});

test('notify false (undoing a Redlock attempt): deleted, nobody told', async () => {
  const keys = server.fresh();
  await server.run(acquireScript, keys, { owner: 'a', ttlMs: 30_000, meta: META, sinceMs: 0 });
  const announced = await publishedOn(server.redis(), keys.released, async () => {
    expect(await server.run(releaseScript, keys, { owner: 'a', notify: false })).toBe('released');
  });
  expect(announced).toBeUndefined();
  expect(await server.redis().exists(keys.lock)).toBe(0);
});

test('exit status 0 with --once-per: the done mark set to the end of the window', async () => {
  const keys = server.fresh();
  await server.run(enterScript, keys, { ...entering('a'), keyOptions: { oncePerMs: 60_000 } });
  const input = { owner: 'a', notify: true, record: { exitStatus: '0', oncePerMs: 60_000 } };
  expect(await server.run(releaseScript, keys, input)).toBe('released');
  const mark = JSON.parse((await server.redis().get(keys.done))!);
  expect(mark).toMatchObject({ host: 'host-a', pid: '4242', cmd: 'make deploy', fence: '1' });
  expect(Number(mark.finished_ms) - Number(mark.started_ms)).toBeGreaterThanOrEqual(0);
  expect(await server.redis().pttl(keys.done)).toBeGreaterThan(59_000);
});

test('one holder of --slots: only its hold and slot freed, the other holder kept', async () => {
  const keys = server.fresh();
  const slots: HoldMode = { kind: 'slots', slots: 2 };
  await enter(keys, 'a', slots);
  await enter(keys, 'b', slots);
  expect(await server.run(releaseScript, keys, { owner: 'a', notify: true })).toBe('released');
  const hash = await server.redis().hgetall(keys.lock);
  expect(Object.keys(hash).sort()).toEqual(['h:b', 'mode', 's:1', 'slots']);
  expect(await server.redis().zrange(keys.holders, 0, -1)).toEqual(['b']);
});
