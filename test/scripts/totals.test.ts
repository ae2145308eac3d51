// lua/totals.lua through the scripts that count: each counted event adds to the key's totals hash
// in the same call as its history entry; exit statuses classed as dlock metrics shows them; a
// forged or wrong-typed totals key never fails the lock operation.

import { expect, test } from 'vitest';
import type { LockKeys } from '../../src/backends/redis/lock/keys.js';
import { enterScript } from '../../src/backends/redis/lock/line.js';
import { releaseScript } from '../../src/backends/redis/lock/release.js';
import { readTotals } from '../../src/backends/redis/lock/totals.js';
import { entering, TIMEOUT_MS, useScriptServer } from '../helpers/scripts.js';

const server = useScriptServer();
const enter = (keys: LockKeys, owner: string, more = {}) =>
  server.run(enterScript, keys, entering(owner, undefined, more));
const release = (keys: LockKeys, owner: string, exitStatus: string) =>
  server.run(releaseScript, keys, { owner, notify: true, record: { exitStatus, oncePerMs: 0 } });
const totals = (keys: LockKeys) =>
  readTotals({ client: server.redis(), target: { label: 'test' } } as never, keys, TIMEOUT_MS);

test.each([
  ['', 'none'],
  ['lost', 'lost'],
  ['unknown', 'unknown'],
  ['0', 'ok'],
  ['1', 'error'],
  ['125', 'error'],
  ['126', 'cannot_run'],
  ['127', 'cannot_run'],
  ['143', 'signal'],
  ['255', 'signal'],
  ['256', 'other'],
  ['0x0', 'other'],
])('a release with exit %j counts as %s', async (exit, expected) => {
  const keys = server.fresh();
  await enter(keys, 'a');
  expect(await release(keys, 'a', exit)).toBe('released');
  const counted = await totals(keys);
  expect(Object.entries(counted.releases).filter(([, count]) => (count ?? 0) > 0)).toEqual([[expected, 1]]);
  expect(counted.acquisitions).toBe(1);
  expect(counted.hold?.count).toBe(1);
  expect(counted.lastSuccessMs !== undefined).toBe(expected === 'ok');
});

test('waits are counted into their buckets; a turned-away attempt by why', async () => {
  const keys = server.fresh();
  await enter(keys, 'a', { waitedMs: 50 });
  expect((await enter(keys, 'b', { join: false })).acquired).toBe(false);
  const counted = await totals(keys);
  expect(counted.wait).toMatchObject({ count: 1, sumMs: 50 });
  expect(counted.wait?.buckets.slice(0, 3)).toEqual([
    [10, 0],
    [100, 1],
    [1000, 1],
  ]);
  expect(counted.turnedAway).toEqual({ held: 1, line: 0, wait: 0, done: 0, superseded: 0, other: 0 });
});

test('a totals key of another type, or forged fields, never fail the lock: they are not counted, and read as unknown', async () => {
  const keys = server.fresh();
  await server.redis().set(keys.totals, 'not a hash');
  expect((await enter(keys, 'a')).acquired).toBe(true);
  expect(await release(keys, 'a', '0')).toBe('released');
  await server.redis().del(keys.totals);
  await server.redis().hset(keys.totals, 'acquired', 'many', 'released:ok', '-3');
  expect((await enter(keys, 'b')).acquired).toBe(true);
  expect(await release(keys, 'b', '0')).toBe('released');
  const counted = await totals(keys);
  // Unknown, not 0: a forged count read as 0 would make a counter fall.
  expect(counted.acquisitions).toBeUndefined();
  expect(counted.releases.ok).toBeUndefined();
  expect(counted.invalid).toEqual([
    { field: 'acquired', value: 'many' },
    // The release added 1 to the forged -3: still no count.
    { field: 'released:ok', value: '-2' },
  ]);
  expect(counted.hold?.count).toBe(1);
});
