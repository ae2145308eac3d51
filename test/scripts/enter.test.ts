// lua/enter.lua through its handle: the lock taken in line order, a place kept, --no-wait turned
// away, --slots and --shared holders side by side, another mode refused, --once-per's done mark.

import { describe, expect, test } from 'vitest';
import type { LockKeys } from '../../src/backends/redis/lock/keys.js';
import { forceReleaseScript } from '../../src/backends/redis/lock/inspect.js';
import { enterScript, type EnterInput } from '../../src/backends/redis/lock/line.js';
import type { HoldMode } from '../../src/backend/mode.js';
import { entering, publishedOn, useScriptServer } from '../helpers/scripts.js';
import { PLACE_LEASE_MS } from '../../src/backends/redis/lock/limits.js';

const server = useScriptServer();
const EXCLUSIVE: HoldMode = { kind: 'exclusive' };

const input = (owner: string, mode: HoldMode = EXCLUSIVE, more: Partial<EnterInput> = {}) =>
  entering(owner, mode, { waitedMs: 12.4, ...more });
const enter = (keys: LockKeys, asked: EnterInput) => server.run(enterScript, keys, asked);

test('first in line, the lock free: taken at once, nobody queued, "acquired" recorded', async () => {
  const keys = server.fresh();
  const before = await server.serverMs();
  expect(await enter(keys, input('a'))).toEqual({ acquired: true, fence: '1', slot: undefined });
  const after = await server.serverMs();
  const hash = await server.redis().hgetall(keys.lock);
  expect(hash).toMatchObject({ owner: 'a', fence: '1', host: 'host-a', pid: '4242', cmd: 'make deploy' });
  expect(hash).toMatchObject({ ttl_ms: '30000', taken_ms: expect.stringMatching(/^\d{13}$/) });
  // Stamped on the server's clock at the grant, whatever the holder's clock says.
  expect(Number(hash.since_ms)).toBeGreaterThanOrEqual(before);
  expect(Number(hash.since_ms)).toBeLessThanOrEqual(after);
  expect(await server.redis().pttl(keys.lock)).toBeGreaterThan(29_000);
  expect(await server.redis().exists(keys.line, keys.lineExpiry, keys.lineInfo)).toBe(0);
  expect(await server.history(keys)).toEqual([
    { event: 'acquired', host: 'host-a', pid: '4242', cmd: 'make deploy', waited_ms: '12', fence: '1', slot: '-1' },
  ]);
  expect(await enter(keys, input('a')), 'a retry of ours').toEqual({ acquired: true, fence: '1', slot: undefined });
});

test("behind a holder: a place in line, its lease and details kept, the holder's time left said", async () => {
  const keys = server.fresh();
  await enter(keys, input('a'));
  const first = await enter(keys, input('b'));
  expect(first).toMatchObject({ acquired: false, place: 1 });
  expect(first.acquired === false && 'nextInMs' in first && first.nextInMs).toBeGreaterThan(29_000);
  expect(await enter(keys, input('c'))).toMatchObject({ acquired: false, place: 2, nextInMs: undefined });
  // Priority 0's band: 1000 × 2^32, then tickets 1, 2 in arrival order (line_score).
  expect(await server.redis().zrange(keys.line, 0, -1, 'WITHSCORES')).toEqual([
    'b',
    '4294967296001',
    'c',
    '4294967296002',
  ]);
  expect(await server.redis().zcard(keys.lineExpiry)).toBe(2);
  expect(JSON.parse((await server.redis().hget(keys.lineInfo, 'b'))!)).toMatchObject({
    mode: 'exclusive',
    host: 'host-a',
    pid: '4242',
    cmd: 'make deploy',
  });
  expect(await server.redis().pttl(keys.line)).toBeLessThanOrEqual(PLACE_LEASE_MS);
});

test('the holder gone: the head of the line takes it when it asks again', async () => {
  const keys = server.fresh();
  await enter(keys, input('a'));
  await enter(keys, input('b'));
  await server.redis().del(keys.lock);
  expect(await enter(keys, input('b'))).toEqual({ acquired: true, fence: '2', slot: undefined });
  expect(await server.redis().zcard(keys.line)).toBe(0);
});

test('--no-wait: busy while held (never queued), and busy while others are in line', async () => {
  const keys = server.fresh();
  await enter(keys, input('a'));
  expect(await enter(keys, input('b', EXCLUSIVE, { join: false }))).toEqual({
    acquired: false,
    place: 0,
    nextInMs: undefined,
    ticket: '0',
  });
  expect(await server.redis().exists(keys.line)).toBe(0);
  await enter(keys, input('c'));
  await server.redis().del(keys.lock);
  expect(await enter(keys, input('d', EXCLUSIVE, { join: false }))).toMatchObject({ acquired: false, place: 0 });
  expect((await server.history(keys)).filter((e) => e.event === 'busy').map((e) => e.why)).toEqual(['held', 'line']);
});

test('--slots 2: two holders in slots 0 and 1, the third waits; another n is refused', async () => {
  const keys = server.fresh();
  const slots: HoldMode = { kind: 'slots', slots: 2 };
  expect(await enter(keys, input('a', slots))).toEqual({ acquired: true, fence: '1', slot: 0 });
  expect(await enter(keys, input('b', slots))).toEqual({ acquired: true, fence: '2', slot: 1 });
  expect(await enter(keys, input('c', slots))).toMatchObject({ acquired: false, place: 1 });
  const hash = await server.redis().hgetall(keys.lock);
  expect(hash).toMatchObject({ mode: 'slots', slots: '2', 's:0': 'a', 's:1': 'b' });
  expect(JSON.parse(hash['h:a'])).toMatchObject({ fence: '1', slot: '0', host: 'host-a' });
  expect(await server.redis().zrange(keys.holders, 0, -1)).toEqual(['a', 'b']);
  expect(await enter(keys, input('d', { kind: 'slots', slots: 3 }))).toEqual({
    acquired: false,
    mismatch: { kind: 'slots', slots: 2, holders: 2, waiters: 1 },
  });
  expect(await enter(keys, input('e'))).toMatchObject({ acquired: false, mismatch: { kind: 'slots' } });
});

test('--shared: shared holders enter together, an exclusive one waits for them, a waiter woken', async () => {
  const keys = server.fresh();
  const shared: HoldMode = { kind: 'shared' };
  expect(await enter(keys, input('a', shared))).toMatchObject({ acquired: true, slot: undefined });
  expect(await enter(keys, input('b', shared))).toMatchObject({ acquired: true, fence: '2' });
  expect(await server.redis().hget(keys.lock, 'mode')).toBe('shared');
  expect(await server.redis().zcard(keys.holders)).toBe(2);
  expect(await enter(keys, input('x'))).toMatchObject({ acquired: false, place: 1 });
  expect(await enter(keys, input('c', shared))).toMatchObject({ acquired: false, place: 2 });
  // The holders' leases end: whoever enters next wakes the shared waiters that may enter with it.
  await server.redis().zadd(keys.holders, 1, 'a', 1, 'b');
  await server.redis().zrem(keys.line, 'x');
  const woken = await publishedOn(server.redis(), `${keys.wakePrefix}c`, () => enter(keys, input('y', shared)));
  expect(woken).toBe('go');
});

test('--slots against an exclusive holder: refused, nothing changed', async () => {
  const keys = server.fresh();
  await enter(keys, input('a'));
  expect(await enter(keys, input('b', { kind: 'slots', slots: 2 }))).toEqual({
    acquired: false,
    mismatch: { kind: 'exclusive', slots: 1, holders: 1, waiters: 0 },
  });
  expect(await server.redis().exists(keys.line)).toBe(0);
});

test('--once-per: a done mark turns the waiter away (and out of the line), with who and until when', async () => {
  const keys = server.fresh();
  const mark = { host: 'h', pid: '1', cmd: 'c', fence: '3', started_ms: '1000', finished_ms: '2000' };
  await server.redis().set(keys.done, JSON.stringify(mark), 'PX', 60_000);
  const reply = await enter(keys, input('a', EXCLUSIVE, { keyOptions: { oncePerMs: 60_000 } }));
  expect(reply).toMatchObject({
    acquired: false,
    done: { host: 'h', pid: '1', cmd: 'c', fence: '3', startedMs: 1000, finishedMs: 2000 },
  });
  expect(await server.redis().exists(keys.lock, keys.line)).toBe(0);
  expect((await server.history(keys)).map((entry) => entry.event)).toEqual(['done']);
  expect(await enter(keys, input('a')), 'without --once-per the mark is not read').toMatchObject({ acquired: true });
});

describe('a key closed by release --force admits no new holder of any kind until it opens', () => {
  const close = (keys: LockKeys, slot?: number) =>
    server.run(forceReleaseScript, keys, { now: false, slot, host: 'ops', pid: 99 });
  const SHARED: HoldMode = { kind: 'shared' };
  const SLOTS: HoldMode = { kind: 'slots', slots: 3 };

  test.each([
    ['--shared', SHARED],
    ['--slots 3 (two slots free)', SLOTS],
  ])('%s: refused (-n busy, a waiter kept in line, told when it opens), then admitted', async (_, mode) => {
    const keys = server.fresh();
    await enter(keys, input('a', mode));
    const { closedForMs } = await close(keys);
    expect(await enter(keys, input('n', mode, { join: false }))).toEqual({
      acquired: false,
      place: 0,
      nextInMs: undefined,
      ticket: '0',
    });
    const waiting = await enter(keys, input('w', mode));
    expect(waiting).toMatchObject({ acquired: false, place: 1 });
    // Told to ask again when the closure ends, not before.
    expect((waiting as { nextInMs: number }).nextInMs).toBeGreaterThan(closedForMs - 1_000);
    expect(await enter(keys, input('x', EXCLUSIVE))).toMatchObject({ acquired: false, place: 2 });
    // The removed holder's lease runs out: the key opens, the waiter enters.
    await server.redis().zadd(keys.holders, 1, '!a');
    expect(await enter(keys, input('w', mode))).toMatchObject({ acquired: true });
  });

  test('--slots: one slot closed (--slot) closes the key, though the other holder leaves', async () => {
    const keys = server.fresh();
    const two: HoldMode = { kind: 'slots', slots: 2 };
    await enter(keys, input('a', two));
    await enter(keys, input('b', two));
    await close(keys, 1);
    await server.redis().zadd(keys.holders, 1, 'a');
    expect(await enter(keys, input('c', two, { join: false }))).toMatchObject({ acquired: false, place: 0 });
    await server.redis().zadd(keys.holders, 1, '!b');
    expect(await enter(keys, input('c', two, { join: false }))).toMatchObject({ acquired: true });
  });

  test('a closed key (no live holder left) makes any kind wait, not "in use otherwise"', async () => {
    const keys = server.fresh();
    await enter(keys, input('a'));
    await close(keys);
    expect(await enter(keys, input('s', SLOTS))).toMatchObject({ acquired: false, place: 1 });
    await server.redis().del(keys.lock);
    expect(await enter(keys, input('s', SLOTS))).toMatchObject({ acquired: true, slot: 0 });
  });
});

describe('--priority and --supersede', () => {
  const asking = (owner: string, keyOptions: EnterInput['keyOptions'], ticket?: string) =>
    input(owner, EXCLUSIVE, { keyOptions, ticket });

  test('each priority has its band of scores, highest first; a forged band end never spills into the next band', async () => {
    const keys = server.fresh();
    await enter(keys, input('holder'));
    await enter(keys, asking('low', { priority: -1000 }));
    await enter(keys, asking('high', { priority: 1000 }));
    await enter(keys, asking('mid', { priority: 0 }));
    const scored = await server.redis().zrange(keys.line, 0, -1, 'WITHSCORES');
    expect(scored).toEqual(['high', '1', 'mid', '4294967296001', 'low', '8589934592001']);
    // A forged score at the top of priority 0's band: the next one of that band stays inside it.
    await server.redis().zadd(keys.line, 1001 * 4294967296 - 1, 'forged');
    await enter(keys, asking('late', { priority: 0 }));
    expect(await server.redis().zscore(keys.line, 'late')).toBe(String(1001 * 4294967296 - 1));
    expect(await server.redis().zscore(keys.line, 'low')).toBe('8589934592001');
  });

  test('a --supersede join takes the next ticket and drops older --supersede waiters (told), never others', async () => {
    const keys = server.fresh();
    await enter(keys, input('holder'));
    await enter(keys, asking('plain', {}));
    const old = await enter(keys, asking('old', { supersede: true }));
    expect(old).toMatchObject({ acquired: false, place: 2, ticket: '1' });
    const told = await publishedOn(server.redis(), `${keys.wakePrefix}old`, () =>
      enter(keys, asking('new', { supersede: true })),
    );
    expect(told).toBe('superseded');
    expect(await server.redis().zrange(keys.line, 0, -1)).toEqual(['plain', 'new']);
    expect(await server.redis().hget(keys.supersede, 'seq')).toBe('2');
    // The old waiter asks again with its ticket: superseded, told by whom, and it records it itself.
    const reply = await enter(keys, asking('old', { supersede: true }, '1'));
    expect(reply).toMatchObject({ acquired: false, supersededBy: { host: 'host-a', pid: '4242', cmd: 'make deploy' } });
    const history = await server.history(keys);
    expect(history.filter((e) => e.event === 'superseded')).toEqual([
      expect.objectContaining({ host: 'host-a', by_host: 'host-a', by_pid: '4242', by_cmd: 'make deploy' }),
    ]);
    expect(await server.redis().hget(keys.lock, 'owner')).toBe('holder');
  });

  test('a waiter whose place lapsed (stopped) is superseded when it comes back; the last ticket rejoins', async () => {
    const keys = server.fresh();
    await enter(keys, input('holder'));
    expect(await enter(keys, asking('frozen', { supersede: true }))).toMatchObject({ ticket: '1' });
    // Its place lapses while it is stopped (as prune_line drops it), then a newer one joins.
    await server.redis().zrem(keys.line, 'frozen');
    await server.redis().zrem(keys.lineExpiry, 'frozen');
    expect(await enter(keys, asking('newer', { supersede: true }))).toMatchObject({ place: 1, ticket: '2' });
    expect(await enter(keys, asking('frozen', { supersede: true }, '1'))).toMatchObject({
      acquired: false,
      supersededBy: {},
    });
    expect(await server.redis().zrange(keys.line, 0, -1)).toEqual(['newer']);
    // The newest one's own place lapses: it joins again at the end, with its ticket, superseding nobody.
    await server.redis().zrem(keys.line, 'newer');
    await enter(keys, asking('plain', {}));
    expect(await enter(keys, asking('newer', { supersede: true }, '2'))).toMatchObject({ place: 2, ticket: '2' });
    expect(await server.redis().zrange(keys.line, 0, -1)).toEqual(['plain', 'newer']);
  });

  test('forged tickets (S seq not a whole number, details) are 0: never a crash', async () => {
    const keys = server.fresh();
    await enter(keys, input('holder'));
    await server.redis().hset(keys.supersede, 'seq', '1e308', 'by', '{"host":"\u001b[31m"}');
    expect(await enter(keys, asking('a', { supersede: true }))).toMatchObject({ place: 1, ticket: '1' });
  });
});
