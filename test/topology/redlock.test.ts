// Redlock across 5 real redis-server processes: mutual exclusion, quorum with instances down,
// 69 vs 75, no partial locks left behind, status per instance and release --force.

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import {
  childEnv,
  childPid,
  CRITICAL,
  events,
  HOLD,
  isAlive,
  killLeftovers,
  onlyEvent,
  spawnDlock,
  tempDir,
  waitForDeath,
} from '../fixtures/observe.js';
import { DLOCK, dlock } from '../helpers/cli.js';
import { startServers, type RedisServer } from '../../support/redis-server.mjs';
import { waitUntil } from '../../support/wait-until.mjs';
import { fail, heal, redisFlags, waitForEvents, type Fault } from '../helpers/redlock.js';

let servers: RedisServer[];
let clients: Redis[];
let flags: string[];

beforeAll(async () => {
  servers = await startServers(5);
  clients = servers.map((server) => server.client());
  flags = redisFlags(servers);
});
afterEach(async () => {
  killLeftovers();
  await heal(servers);
});
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
});

const lockKey = (key: string) => `dlock:{${key}}`;
const fenceKey = (key: string) => `dlock:{${key}}:fence`;

/** Write a lock hash owned by another (made-up) dlock on instance `i`, as its acquire would. */
async function holdForeign(i: number, key: string, owner = 'someone-else', host = 'elsewhere'): Promise<void> {
  await clients[i].hset(lockKey(key), {
    owner,
    host,
    pid: '1',
    fence: '7',
    cmd: 'other',
    since_ms: Date.now(),
    ttl_ms: 30_000,
  });
  await clients[i].pexpire(lockKey(key), 30_000);
}

/** Which instances hold a lock hash for `key` right now (only the given, live, ones are asked). */
async function holdersOf(key: string, which = [0, 1, 2, 3, 4]): Promise<(string | null)[]> {
  return Promise.all(which.map((i) => clients[i].hget(lockKey(key), 'owner')));
}

test('mutual exclusion: 15 concurrent dlock run over 5 instances', async () => {
  const dir = tempDir();
  const counter = join(dir, 'counter');
  const log = join(dir, 'sections');
  const started = Date.now();
  const results = await Promise.all(
    Array.from({ length: 15 }, () => dlock(['run', ...flags, '-t', '2s', 'mutex', '--', CRITICAL, counter, log])),
  );
  console.log(`15 contenders over 5 instances finished in ${Date.now() - started}ms`);

  for (const result of results) expect(result.code, result.stderr).toBe(0);
  expect(readFileSync(counter, 'utf8').trim()).toBe('15');
  const sections = readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .map((line) => line.split(' ').map(BigInt))
    .map(([start, end, fence]) => ({ start, end, fence }))
    .sort((a, b) => (a.start < b.start ? -1 : 1));
  expect(sections).toHaveLength(15);
  for (let i = 1; i < sections.length; i++) {
    expect(sections[i].start, `section ${i} starts before section ${i - 1} ends`).toBeGreaterThan(sections[i - 1].end);
    expect(sections[i].fence, 'fencing tokens increase in the order the sections ran').toBeGreaterThan(
      sections[i - 1].fence,
    );
  }
  expect(await holdersOf('mutex')).toEqual([null, null, null, null, null]);
});

describe.each<Fault>(['stop', 'pause'])('instances down (%s)', (fault) => {
  test('with 2 of 5 down the lock still works, and a second contender is busy (75)', async () => {
    const key = `two-down-${fault}`;
    await fail(servers[1], fault);
    await fail(servers[3], fault);
    const dir = tempDir();
    // 4s leases: with 2 of 5 down every renewal and acquire needs all 3 others, each within a tenth
    // of the TTL; at 1s (100ms each) a loaded machine could miss that while dlock starts.
    const holder = spawnDlock(['run', ...flags, '-t', '4s', '--log-format', 'json', key, '--', HOLD, dir]);
    await holder.waitFor('"event":"acquired"');

    const env = await childEnv(dir);
    expect(await holdersOf(key, [0, 2, 4])).toEqual([env.DLOCK_TOKEN, env.DLOCK_TOKEN, env.DLOCK_TOKEN]);
    expect(env.DLOCK_FENCING_TOKEN).toBe('1');
    const busy = await dlock(['run', ...flags, '-n', '-t', '4s', key, '--', 'true']);
    expect(busy.code, busy.stderr).toBe(75);
    expect(busy.stderr).toMatch(new RegExp(`^dlock: ${key} is busy \\(held by \\S+ pid ${holder.process.pid}`));

    await waitForEvents(holder, 'renewed', 2);
    writeFileSync(join(dir, 'stop'), '');
    const result = await holder.result;
    expect(result.code, result.stderr).toBe(0);
    expect(events(result.stderr, 'lost')).toEqual([]);
    expect(events(result.stderr, 'released')[0].released).toBe(true);
    expect(await holdersOf(key, [0, 2, 4])).toEqual([null, null, null]);
  });

  test('with 3 of 5 down: exit 69 naming each failed instance and why; the child never runs', async () => {
    const key = `three-down-${fault}`;
    for (const i of [0, 2, 3]) await fail(servers[i], fault);
    const dir = tempDir();
    // A 4s TTL: each instance gets the whole --connect-timeout; 1s of it, so that a live one on a loaded
    // machine still answers in time (at 300ms all five once timed out at load 11).
    const result = await dlock([
      'run',
      ...flags,
      '-t',
      '4s',
      '--connect-timeout',
      '1s',
      key,
      '--',
      'touch',
      join(dir, 'ran'),
    ]);

    expect(result.code, result.stderr).toBe(69);
    expect(existsSync(join(dir, 'ran'))).toBe(false);
    expect(result.stdout).toBe('');
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^dlock: no quorum: 3 of 5 Redis instances needed, 3 failed \(/);
    const why = fault === 'stop' ? 'connection refused' : 'timed out after 1000ms';
    for (const i of [0, 2, 3]) expect(lines[0]).toContain(`${servers[i].url}: ${why}`);
    for (const i of [1, 4]) expect(lines[0]).not.toContain(`${servers[i].url}:`);
    expect(await holdersOf(key, [1, 4])).toEqual([null, null]);
  });
});

test('a nested dlock run on the same key and instances runs under the lock it holds, with 2 of 5 down too', async () => {
  const inner = [
    DLOCK,
    'run',
    ...flags,
    '-n',
    '-t',
    '4s',
    'nested',
    '--',
    'sh',
    '-c',
    'printf "%s %s;" "$DLOCK_KEY" "$DLOCK_FENCING_TOKEN"',
  ];
  // 4s leases: the outer lock (with 2 of 5 down, renewed by all 3 others within a tenth of the TTL
  // each) must outlast the inner dlock's start on a loaded machine.
  const outer = await dlock(['run', ...flags, '-t', '4s', 'nested', '--', ...inner]);
  expect(outer).toMatchObject({ code: 0, stdout: 'nested 1;' });

  await fail(servers[0], 'stop');
  await fail(servers[3], 'pause');
  const degraded = await dlock(['run', ...flags, '-t', '4s', 'nested', '--', ...inner]);
  expect(degraded).toMatchObject({ code: 0, stdout: 'nested 2;' });
});

test('busy (a majority held by another dlock) is 75, never 69, until too few instances answer', async () => {
  const key = 'busy';
  const dir = tempDir();
  // A 4s lease: the holder must keep its majority through several dlock starts on a loaded machine.
  const holder = spawnDlock(['run', ...flags, '-t', '4s', '--log-format', 'json', key, '--', HOLD, dir]);
  await holder.waitFor('"event":"acquired"');

  const busy = await dlock(['run', ...flags, '-n', key, '--', 'true']);
  expect(busy.code, busy.stderr).toBe(75);
  expect(busy.stderr).toMatch(/^dlock: busy is busy \(held by /);
  expect((await dlock(['run', ...flags, '-n', '-E', '3', key, '--', 'true'])).code).toBe(3);

  // Two instances gone: the holder keeps its majority, a contender is still just busy.
  await fail(servers[0], 'stop');
  await fail(servers[4], 'pause');
  // Contenders at 4s too: with 2 of 5 down, a tenth of a 1s TTL per instance could let a slow live one fail (69).
  const stillBusy = await dlock(['run', ...flags, '-n', '-t', '4s', key, '--', 'true']);
  expect(stillBusy.code, stillBusy.stderr).toBe(75);
  const waited = await dlock(['run', ...flags, '-w', '300ms', '-t', '4s', key, '--', 'true']);
  expect(waited.code, waited.stderr).toBe(75);
  expect(waited.stderr).toMatch(/busy .*not acquired within 300ms/);

  // A third one gone: nobody can know any more; that is 69, and the holder loses the lock.
  await fail(servers[2], 'stop');
  const unavailable = await dlock(['run', ...flags, '-n', '-t', '4s', '--connect-timeout', '1s', key, '--', 'true']);
  expect(unavailable.code, unavailable.stderr).toBe(69);
  expect(unavailable.stderr).toMatch(/^dlock: no quorum: 3 of 5 Redis instances needed, 3 failed/);
  const lost = await holder.result;
  expect(lost.code, lost.stderr).toBe(76);
});

describe('no partial lock is left behind by a failed attempt', () => {
  test('split: another owner on 2 instances and one down, so we win only 2 of 5 (75)', async () => {
    const key = 'split';
    for (const i of [0, 1]) await holdForeign(i, key);
    await fail(servers[2], 'stop');
    const result = await dlock(['run', ...flags, '-n', '-t', '4s', key, '--', 'true']);
    expect(result.code, result.stderr).toBe(75);

    // Round 1 did acquire instances 3 and 4 (their counters moved), and both were released.
    expect(await Promise.all([3, 4].map((i) => clients[i].get(fenceKey(key))))).toEqual(['1', '1']);
    expect(await holdersOf(key, [0, 1, 3, 4])).toEqual(['someone-else', 'someone-else', null, null]);

    // The operator can take the other owner's partial lock from every instance: it stays
    // closed (owner "") for that owner's remaining lease.
    const released = await dlock(['release', '--force', ...flags, key]);
    expect(released.code, released.stderr).toBe(0);
    expect(released.stdout).toMatch(
      /^split: released the lock held by elsewhere pid 1, .*fence 7.* \(command: other\); closed to new holders for [^\n]+\n$/,
    );
    expect(await holdersOf(key, [0, 1, 3, 4])).toEqual(['', '', null, null]);
  });

  test('timeouts: 3 of 5 hang while we wait; every instance gets a release, the hung ones after our late acquires (69)', async () => {
    const key = 'hung';
    // Load the scripts everywhere, so that the hung instances can run the queued EVALSHA later.
    expect((await dlock(['run', ...flags, 'warm-up', '--', 'true'])).code).toBe(0);
    for (const i of [0, 1, 2]) await holdForeign(i, key);
    // A long TTL: anything we left behind would still be there when we look.
    const dir = tempDir();
    const waiter = spawnDlock([
      'run',
      ...flags,
      '-w',
      '4s',
      '-t',
      '30s',
      '--connect-timeout',
      '1s',
      '--log-format',
      'json',
      key,
      '--',
      'touch',
      join(dir, 'ran'),
    ]);
    await waiter.waitFor('"event":"waiting"');

    // The waiter took (and undid) 3 and 4 on each try so far: it is idle now, until told.
    const counters = await Promise.all([3, 4].map(async (i) => BigInt((await clients[i].get(fenceKey(key)))!)));

    // 2, 3 and 4 hang; then 0 and 1 are freed and the waiter is told: it wins only 0 and 1.
    for (const i of [2, 3, 4]) servers[i].pause();
    for (const i of [0, 1]) await clients[i].del(lockKey(key));
    await clients[0].publish(`${lockKey(key)}:released`, 'test');
    const result = await waiter.result;
    expect(result.code, result.stderr).toBe(69);
    expect(existsSync(join(dir, 'ran'))).toBe(false);
    for (const i of [2, 3, 4]) expect(result.stderr).toContain(`${servers[i].url}: timed out after 1000ms`);
    expect(onlyEvent(result.stderr, 'error').message).toMatch(
      /^hung not acquired within 4s: Redis was unreachable for the last [\d.]+m?s of the wait, until it ran out \(no quorum: /,
    );
    expect(events(result.stderr, 'outage')).toHaveLength(1);
    // A wait rides out an outage until it runs out: it took (and undid) 0 and 1 on every try.
    const tries = await Promise.all([0, 1].map(async (i) => BigInt((await clients[i].get(fenceKey(key)))!)));
    expect(tries[0]).toBeGreaterThanOrEqual(2n);
    expect(tries[1]).toBe(tries[0]);
    expect(await holdersOf(key, [0, 1])).toEqual([null, null]);

    // 3 and 4 now run the acquires queued while they hung (their counters move), each followed by its release.
    await heal(servers);
    const lateAcquires = async () =>
      (await Promise.all([3, 4].map((i) => clients[i].get(fenceKey(key))))).map((v) => BigInt(v!));
    await waitUntil(
      'the late acquires',
      async () => (await lateAcquires()).every((v, n) => v === counters[n] + tries[0]),
      { timeoutMs: 5_000 },
    );
    expect(await holdersOf(key)).toEqual([null, null, 'someone-else', null, null]);
    expect(await clients[2].get(fenceKey(key))).toBe(null);
  });
});

describe('status across instances', () => {
  test('shows the holder on each instance and that a majority agrees (exit 0), text and --json', async () => {
    const key = 'shown';
    const dir = tempDir();
    // A 4s lease: with 2 of 5 down later, it must stay renewed by all 3 others through four dlock starts.
    const holder = spawnDlock(['run', ...flags, '-t', '4s', '--log-format', 'json', key, '--', HOLD, dir]);
    await holder.waitFor('"event":"acquired"');
    const pid = holder.process.pid!;

    const text = await dlock(['status', ...flags, key]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(new RegExp(`^${key}: held\\n  host     \\S+\\n  pid      ${pid}\\n`));
    expect(text.stdout).toContain('instances (3 of 5 needed; a majority agrees):');
    for (const server of servers)
      expect(text.stdout).toMatch(new RegExp(`\\n  ${server.url}  held by \\S+ pid ${pid} \\(fence 1\\)\\n`));

    const json = await dlock(['status', '--json', ...flags, key]);
    expect(json.code).toBe(0);
    const view = JSON.parse(json.stdout);
    expect(view).toMatchObject({ key, held: true, quorum: 3, holder: { pid, fence: '1' } });
    expect(view.instances.map((i: { redis: string }) => i.redis)).toEqual(servers.map((s) => s.url));
    for (const instance of view.instances) expect(instance).toMatchObject({ held: true, holder: { pid, fence: '1' } });
    expect(json.stdout).not.toContain((await childEnv(dir)).DLOCK_TOKEN);

    // Two instances down: still held by a majority; the failures are shown where they are.
    await fail(servers[1], 'stop');
    await fail(servers[3], 'pause');
    const degraded = await dlock(['status', '--connect-timeout', '1s', ...flags, key]);
    expect(degraded.code, degraded.stderr).toBe(0);
    expect(degraded.stdout).toContain('a majority agrees');
    expect(degraded.stdout).toContain(`  ${servers[1].url}  error: connection refused\n`);
    expect(degraded.stdout).toContain(`  ${servers[3].url}  error: timed out after 1000ms waiting for an answer`);
    const degradedJson = JSON.parse(
      (await dlock(['status', '--json', '--connect-timeout', '1s', ...flags, key])).stdout,
    );
    expect(degradedJson.instances.map((i: { held: boolean; error?: string }) => [i.held, i.error])).toEqual([
      [true, undefined],
      [false, 'connection refused'],
      [true, undefined],
      [false, expect.stringMatching(/^timed out after 1000ms waiting for an answer/)],
      [true, undefined],
    ]);

    await heal(servers);
    writeFileSync(join(dir, 'stop'), '');
    expect((await holder.result).code).toBe(0);
    const free = await dlock(['status', ...flags, key]);
    expect(free.code).toBe(1);
    expect(free.stdout).toMatch(new RegExp(`^${key}: free\\ninstances \\(3 of 5 needed; no majority holds it\\):\\n`));
  });

  test('a split without a majority is not held (exit 1); too few answers to tell is 69', async () => {
    const key = 'torn';
    const owners = ['a', 'a', 'b', 'b', undefined];
    await Promise.all(owners.map((owner, i) => owner && holdForeign(i, key, owner, `host-${owner}`)));
    const split = await dlock(['status', ...flags, key]);
    expect(split.code, split.stderr).toBe(1);
    expect(split.stdout).toContain(`${key}: free\ninstances (3 of 5 needed; no majority holds it):\n`);
    expect(split.stdout).toContain(`  ${servers[0].url}  held by host-a pid 1 (fence 7)\n`);
    expect(split.stdout).toContain(`  ${servers[3].url}  held by host-b pid 1 (fence 7)\n`);
    const json = JSON.parse((await dlock(['status', '--json', ...flags, key])).stdout);
    expect(json).toMatchObject({ held: false, holder: null });
    expect(json.instances.map((i: { holder?: { host: string } }) => i.holder?.host ?? null)).toEqual([
      'host-a',
      'host-a',
      'host-b',
      'host-b',
      null,
    ]);

    // "b" on 2, the "free" one and one "b" instance down: "a" or "b" could hold a majority.
    await fail(servers[3], 'stop');
    await fail(servers[4], 'stop');
    const unknown = await dlock(['status', ...flags, key]);
    expect(unknown.code, unknown.stdout).toBe(69);
    expect(unknown.stderr).toMatch(
      /^dlock: cannot tell whether a majority holds torn: 2 of 5 instances did not answer \(/,
    );
    expect(unknown.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(unknown.stdout).toContain(`  ${servers[4].url}  error: connection refused\n`);

    await dlock(['release', '--force', ...flags, key]);
  });
  test('without a key, lists only the locks a majority holds', async () => {
    const dir = tempDir();
    const holder = spawnDlock(['run', ...flags, '-t', '4s', '--log-format', 'json', 'listed', '--', HOLD, dir]);
    await holder.waitFor('"event":"acquired"');
    for (const i of [0, 1]) await holdForeign(i, 'partial');

    const list = await dlock(['status', ...flags]);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(new RegExp(`\\nlisted +\\S+ +${holder.process.pid} `));
    expect(list.stdout).not.toMatch(/^partial /m); // (the worktree's path may contain the word)
    const json = JSON.parse((await dlock(['status', '--json', ...flags])).stdout) as { key: string; pid: number }[];
    expect(json.find((row) => row.key === 'listed')).toMatchObject({ pid: holder.process.pid, fence: '1' });
    expect(json.map((row) => row.key)).not.toContain('partial');

    writeFileSync(join(dir, 'stop'), '');
    expect((await holder.result).code).toBe(0);
    await dlock(['release', '--force', ...flags, 'partial']);
  });
});

test('release --force --now removes the lock from every instance; the holder then loses it (76)', async () => {
  const key = 'forced';
  const dir = tempDir();
  // A 4s lease: the holder must still hold when the release's dlock has started on a loaded machine.
  const holder = spawnDlock(['run', ...flags, '-t', '4s', '--log-format', 'json', key, '--', HOLD, dir]);
  await holder.waitFor('"event":"acquired"');
  const pid = await childPid(dir);

  const released = await dlock(['release', '--force', '--now', ...flags, key]);
  expect(released.code, released.stderr).toBe(0);
  expect(released.stdout).toMatch(
    new RegExp(
      `^${key}: released the lock held by \\S+ pid ${holder.process.pid}, .*fence 1.*\\(command: ${HOLD} ${dir}\\); open to new holders now\\n$`,
    ),
  );
  expect(await holdersOf(key)).toEqual([null, null, null, null, null]);

  const lost = await holder.result;
  expect(lost.code, lost.stderr).toBe(76);
  expect(events(lost.stderr, 'lost')[0]).toMatchObject({ reason: 'refused' });
  await waitForDeath(pid);
  expect(isAlive(pid)).toBe(false);

  const again = await dlock(['release', '--force', ...flags, key]);
  expect(again.code).toBe(1);
  expect(again.stdout).toBe(`${key}: not held; nothing released\n`);
});
