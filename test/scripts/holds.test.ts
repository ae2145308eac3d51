// The holder's extras through the line scripts (issue 35): enter.lua's ARGV[13] (reason, user, a hold, its end or
// none), release.lua's ARGV[10] (who ends a hold: `released` by its user, `forced` by another) and force-release
// removing a hold at once.

import { expect, test } from 'vitest';
import type { LockKeys } from '../../src/backends/redis/lock/keys.js';
import { enterScript } from '../../src/backends/redis/lock/line.js';
import { releaseScript } from '../../src/backends/redis/lock/release.js';
import { forceReleaseScript } from '../../src/backends/redis/lock/inspect.js';
import type { HolderMeta } from '../../src/backend/holder.js';
import { entering, META, useScriptServer } from '../helpers/scripts.js';

const server = useScriptServer();
const enter = (keys: LockKeys, owner: string, meta: HolderMeta) =>
  server.run(enterScript, keys, { ...entering(owner), meta });

test('--reason and the user: in the exclusive hash, the waiter details and the acquired entry', async () => {
  const keys = server.fresh();
  await enter(keys, 'a', { ...META, reason: 'deploy 4.2', user: 'ana' });
  expect(await server.redis().hmget(keys.lock, 'reason', 'user', 'hold', 'until_ms')).toEqual([
    'deploy 4.2',
    'ana',
    null,
    null,
  ]);
  await enter(keys, 'b', { ...META, reason: 'next', user: 'bob', hold: { forever: true } });
  expect(JSON.parse((await server.redis().hget(keys.lineInfo, 'b'))!)).toMatchObject({
    reason: 'next',
    user: 'bob',
    hold: '1',
  });
  expect((await server.history(keys)).at(-1)).toMatchObject({ event: 'acquired', reason: 'deploy 4.2', user: 'ana' });
});

test('a hold until unhold has no expiry; one with an end expires then, its until_ms on the server clock', async () => {
  const forever = server.fresh();
  await enter(forever, 'a', { ...META, pid: '', user: 'ana', reason: 'freeze', hold: { forever: true } });
  expect(await server.redis().pttl(forever.lock)).toBe(-1);
  expect(await server.redis().hmget(forever.lock, 'hold', 'until_ms', 'ttl_ms')).toEqual(['1', '', '']);
  expect((await server.history(forever)).at(-1)).toMatchObject({ hold: '1', until_ms: '' });

  const until = server.fresh();
  const untilMs = Date.now() + 60_000;
  await enter(until, 'a', { ...META, pid: '', user: 'ana', reason: 'freeze', hold: { forever: false, untilMs } });
  const pttl = await server.redis().pttl(until.lock);
  expect(pttl).toBeGreaterThan(55_000);
  expect(pttl).toBeLessThanOrEqual(61_000);
  const stored = Number(await server.redis().hget(until.lock, 'until_ms'));
  expect(Math.abs(stored - untilMs)).toBeLessThan(5_000);
});

test("unhold's release: `released` with by_user by its user, `forced` with by_user for another (--force)", async () => {
  const hold = { ...META, pid: '' as const, user: 'ana', reason: 'freeze', hold: { forever: true } };
  const own = server.fresh();
  await enter(own, 'a', hold);
  const by = { user: 'ana', host: 'ci-7', forced: false };
  const record = { exitStatus: '', oncePerMs: 0, by };
  expect(await server.run(releaseScript, own, { owner: 'a', notify: true, record })).toBe('released');
  expect((await server.history(own)).at(-1)).toMatchObject({
    event: 'released',
    user: 'ana',
    by_user: 'ana',
    by_host: 'ci-7',
  });

  const stolen = server.fresh();
  await enter(stolen, 'a', hold);
  const steal = { exitStatus: '', oncePerMs: 0, by: { user: 'bob', host: 'ci-9', forced: true } };
  expect(await server.run(releaseScript, stolen, { owner: 'a', notify: true, record: steal })).toBe('released');
  const entry = (await server.history(stolen)).at(-1);
  expect(entry).toMatchObject({ event: 'forced', user: 'ana', by_user: 'bob', by_host: 'ci-9', now: 'true' });
  expect(entry).not.toHaveProperty('by_pid');
  // Another owner's token releases nothing: the hold's own token only.
  const other = server.fresh();
  await enter(other, 'a', hold);
  expect(await server.run(releaseScript, other, { owner: 'x', notify: true, record: steal })).toBe('not-ours');
  expect(await server.redis().exists(other.lock)).toBe(1);
});

test('release --force removes a hold with an end at once: no process to stop, the key not kept closed', async () => {
  const keys = server.fresh();
  await enter(keys, 'a', {
    ...META,
    pid: '',
    reason: 'freeze',
    hold: { forever: false, untilMs: Date.now() + 60_000 },
  });
  const reply = await server.run(forceReleaseScript, keys, { now: false, host: 'ops', pid: 99 });
  expect(reply.closedForMs).toBe(0);
  expect(reply.holders[0]).toMatchObject({ hold: true, reason: 'freeze' });
  expect(await server.redis().exists(keys.lock)).toBe(0);
});
