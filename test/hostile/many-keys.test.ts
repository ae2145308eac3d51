// Many keys, and forged ones, under the prefix: the commands that read every lock there (`status`
// without a key, `metrics`, the shell completion's `__complete-keys`) finish in a bounded time,
// say something sane and honest, and one forged key never spoils the others. Keys are planted
// with one EVAL each batch, in the layout of docs/reference/redis-layout.md.

import type { Redis } from 'ioredis';
import { beforeEach, expect, test } from 'vitest';
import { cleanEnv, dlock } from '../helpers/cli.js';
import { expectPromtoolPasses, samples } from '../helpers/metrics.js';
import { useRedisServer } from '../helpers/server.js';
import { RedisServer } from '../../support/redis-server.mjs';
import { TcpProxy } from '../../support/tcp-proxy.mjs';

let server: RedisServer;
let admin: Redis;
useRedisServer((started) => {
  server = started;
  admin = started.client();
});
beforeEach(async () => {
  await admin.flushall();
});

/** Plant `count` held exclusive locks `<name>000001`… under `prefix`, in one EVAL. */
async function plantHeld(prefix: string, name: string, count: number): Promise<void> {
  const lua = `
    local prefix, name, n, now = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4]
    for i = 1, n do
      local L = prefix .. '{' .. name .. string.format('%06d', i) .. '}'
      redis.call('HSET', L, 'owner', 'o' .. i, 'fence', tostring(i), 'host', 'h', 'pid', '1', 'cmd', 'c',
        'since_ms', now, 'ttl_ms', '600000')
      redis.call('PEXPIRE', L, 600000)
    end
    return n`;
  await admin.eval(lua, 0, prefix, name, count, Date.now());
}

/** `dlock <args>` against the test's server, timed in ms. */
async function timed(args: string[], env: Record<string, string> = {}) {
  const started = performance.now();
  const result = await dlock(args, { env: cleanEnv({ DLOCK_REDIS_URL: server.url, ...env }) });
  return { ...result, ms: performance.now() - started };
}

test('metrics with 1005 held locks reports exactly 1000 (named keys first, then by name) and 5 omitted', async () => {
  await plantHeld('dlock:', 'k', 1005);
  const { code, stdout, stderr, ms } = await timed(['metrics', 'k001003', 'k000500']);
  expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  expectPromtoolPasses(stdout);
  const held = [...samples(stdout).keys()].filter((id) => id.startsWith('dlock_lock_held{'));
  const keys = held.map((id) => /key="([^"]*)"/.exec(id)![1]);
  // The named ones, then every other held one by name up to 1000 in all.
  const expected = ['k001003', 'k000500'];
  for (let i = 1; expected.length < 1000; i++) {
    const key = `k${String(i).padStart(6, '0')}`;
    if (!expected.includes(key)) expected.push(key);
  }
  expect(new Set(keys)).toEqual(new Set(expected));
  expect(samples(stdout).get('dlock_metrics_locks_omitted{prefix="dlock:"}')).toBe('5');
  expect(samples(stdout).get('dlock_metrics_locks_unreadable{prefix="dlock:"}')).toBe('0');
  console.log(`metrics, 1005 held locks: ${(ms / 1000).toFixed(2)}s`);
  expect(ms).toBeLessThan(10_000);
});

test('status lists 20 000 held locks, every one, by name, within 10 s', async () => {
  await plantHeld('dlock:', 'k', 20_000);
  const { code, stdout, stderr, ms } = await timed(['status']);
  expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  const rows = stdout.trimEnd().split('\n');
  expect(rows).toHaveLength(20_001);
  expect(rows[1]).toMatch(/^k000001 /);
  expect(rows[20_000]).toMatch(/^k020000 /);
  console.log(`status, 20 000 held locks: ${(ms / 1000).toFixed(2)}s`);
  // One read after the other took 5.5 to 9 s on a loaded 2-core machine, 16 at a time 3.3 s.
  expect(ms).toBeLessThan(10_000);
});

test('status reads the listed locks together: 1500 locks over a link with 5 ms of delay take well under 1500 × 5 ms', async () => {
  await plantHeld('dlock:', 'k', 1500);
  const proxy = await TcpProxy.start(server.port);
  try {
    proxy.delay(5);
    const { code, stdout, stderr, ms } = await timed(['status'], { DLOCK_REDIS_URL: proxy.url });
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout.trimEnd().split('\n')).toHaveLength(1501);
    console.log(`status, 1500 held locks, replies delayed 5 ms: ${(ms / 1000).toFixed(2)}s`);
    // One read after the other: at least 7.5 s (10.4 s measured before the reads went 16 at a time).
    expect(ms).toBeLessThan(4_000);
  } finally {
    await proxy.close();
  }
});

test('completion with 20 000 locks: at most 1000 names, by name, with the true common prefix', async () => {
  await plantHeld('dlock:', 'job-', 19_999);
  await plantHeld('dlock:', 'x', 1);
  // Completion's 200 ms bound is tight on a loaded machine: ask a few times, one answer is enough.
  let result = await timed(['__complete-keys', '']);
  for (let attempt = 1; attempt < 5 && result.code !== 0; attempt++) result = await timed(['__complete-keys', '']);
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
  const names = result.stdout.trimEnd().split('\n');
  expect(names.length).toBeLessThanOrEqual(1000);
  expect(names).toEqual([...names].sort());
  // The shells insert the candidates' common prefix: it must be the one of every lock ("", as
  // x000001 exists), never "job-0" from a cut list.
  expect(names[0]).toBe('job-000001');
  expect(names.at(-1)).toBe('x000001');
  console.log(`__complete-keys, 20 000 locks: ${(result.ms / 1000).toFixed(2)}s`);
});

/**
 * Beside 3 real locks `a-real…` and 3 `zreal…`: 4000 forged names under the prefix (a string, a
 * list, a hash of one 1000-byte field, a lock whose line key holds a string: 1000 of each), a lock
 * with a 9 MiB field, one of three 3 MiB fields, one whose 1000 waiters have 10 kB details each
 * (10 MB), and a name that is not UTF-8.
 */
async function plantForged(): Promise<void> {
  await plantHeld('dlock:', 'a-real', 3);
  await plantHeld('dlock:', 'zreal', 3);
  const lua = `
    local n, now = tonumber(ARGV[1]), ARGV[2]
    for i = 1, n do
      local L = 'dlock:{g' .. string.format('%05d', i) .. '}'
      local m = i % 4
      if m == 0 then redis.call('SET', L, 'x')
      elseif m == 1 then redis.call('RPUSH', L, 'a')
      elseif m == 2 then redis.call('HSET', L, 'junk', string.rep('j', 1000))
      else redis.call('HSET', L, 'owner', 'o' .. i); redis.call('SET', L .. ':line', 's') end
    end
    redis.call('HSET', 'dlock:{huge}', 'owner', 'o', 'fence', '1', 'cmd', string.rep('A', 9 * 1024 * 1024))
    for i = 1, 3 do redis.call('HSET', 'dlock:{wide}', 'f' .. i, string.rep('W', 3 * 1024 * 1024)) end
    redis.call('HSET', 'dlock:{lined}', 'owner', 'o')
    for i = 1, 1000 do
      redis.call('ZADD', 'dlock:{lined}:line', i, 'w' .. i)
      redis.call('ZADD', 'dlock:{lined}:line:expiry', tonumber(now) + 5000, 'w' .. i)
      redis.call('HSET', 'dlock:{lined}:line:info', 'w' .. i, string.rep('D', 10000))
    end
    redis.call('HSET', 'dlock:{\\255\\254\\0bin}', 'owner', 'o', 'fence', '1', 'ttl_ms', '1')
    return n`;
  await admin.eval(lua, 0, 4000, Date.now());
}

test('status with forged keys under the prefix: every real lock listed, each forged one alone unreadable, one short error line', async () => {
  await plantForged();
  const status = await timed(['status']);
  expect(status.code).toBe(69);
  // One line on stderr, of a bounded length, whatever the number of unreadable locks.
  expect(status.stderr.length).toBeLessThan(4000);
  expect(status.stderr.split('\n')).toHaveLength(2);
  expect(status.stderr).toMatch(/^dlock: could not read 1003 of the \d+ locks under dlock: \(.*; and 998 more\)\n$/);
  const rows = status.stdout.split('\n');
  for (const key of ['a-real000001', 'a-real000002', 'a-real000003', 'zreal000001', 'zreal000002', 'zreal000003'])
    expect(rows.find((row) => row.startsWith(`${key} `))).toMatch(new RegExp(`^${key} +h +1 `));
  // Before: the 9 MiB reply closed the connection, and every lock read after it was "not connected".
  expect(rows.find((row) => row.startsWith('huge '))).toMatch(/unreadable: the lock dlock:\{huge\} holds more/);
  expect(rows.find((row) => row.startsWith('wide '))).toMatch(/unreadable: the lock dlock:\{wide\} holds more/);
  expect(rows.find((row) => row.startsWith('lined '))).toMatch(/unreadable: the lock dlock:\{lined\} holds more/);
  expect(rows.filter((row) => / unreadable: the key dlock:\{g\d+\}:line holds a string/.test(row))).toHaveLength(1000);
  expect(rows.filter((row) => row.includes('unreadable'))).toHaveLength(1003);
  console.log(`status, 4000 forged keys: ${(status.ms / 1000).toFixed(2)}s`);
  expect(status.ms).toBeLessThan(10_000);
});

test('metrics and completion with forged keys under the prefix: bounded, promtool passes, real locks there', async () => {
  await plantForged();
  const metrics = await timed(['metrics']);
  expect(metrics.code).toBe(69);
  expect(metrics.stderr.length).toBeLessThan(4000);
  expect(metrics.stderr.split('\n')).toHaveLength(2);
  expectPromtoolPasses(metrics.stdout);
  // Held: the 6 real locks and the 1000 forged hashes of one field; the first 1000 by name are reported.
  expect(samples(metrics.stdout).get('dlock_lock_held{key="a-real000001",prefix="dlock:"}')).toBe('1');
  expect(samples(metrics.stdout).get('dlock_lock_held{key="zreal000003",prefix="dlock:"}')).toBeUndefined();
  expect(samples(metrics.stdout).get('dlock_metrics_locks_omitted{prefix="dlock:"}')).toBe('6');
  expect(samples(metrics.stdout).get('dlock_metrics_locks_unreadable{prefix="dlock:"}')).toBe('1003');
  console.log(`metrics, 4000 forged keys: ${(metrics.ms / 1000).toFixed(2)}s`);

  let complete = await timed(['__complete-keys', '']);
  for (let attempt = 1; attempt < 5 && complete.code !== 0; attempt++) complete = await timed(['__complete-keys', '']);
  expect(complete.code).toBe(0);
  const names = complete.stdout.trimEnd().split('\n');
  expect(names).toContain('a-real000001');
  expect(names).toContain('zreal000003');
  for (const name of names) expect(name).toMatch(/^[\x20-\x7e]{1,512}$/);
});

test('one forged lock too large to read spoils no other: status and metrics read every lock after it', async () => {
  await plantHeld('dlock:', 'a', 3);
  await plantHeld('dlock:', 'z', 3);
  await admin.hset('dlock:{big}', { owner: 'o', fence: '1', cmd: 'A'.repeat(9 * 1024 * 1024) });
  const status = await timed(['status']);
  expect(status.code).toBe(69);
  expect(status.stderr).toMatch(
    /^dlock: could not read 1 of the 7 locks under dlock: \(big: the lock dlock:\{big\} holds/,
  );
  expect(status.stderr.split('\n')).toHaveLength(2);
  const rows = status.stdout.trimEnd().split('\n');
  expect(rows.map((row) => row.split(/\s+/)[0])).toEqual([
    'KEY',
    'a000001',
    'a000002',
    'a000003',
    'z000001',
    'z000002',
    'z000003',
    'big',
  ]);
  expect(rows.filter((row) => /^[az]\d+ +h +1 /.test(row))).toHaveLength(6);

  const metrics = await timed(['metrics']);
  expect(metrics.code).toBe(69);
  expectPromtoolPasses(metrics.stdout);
  expect(
    [...samples(metrics.stdout)].filter(([id, value]) => id.startsWith('dlock_lock_held{') && value === '1'),
  ).toHaveLength(6);
  expect(samples(metrics.stdout).get('dlock_metrics_locks_unreadable{prefix="dlock:"}')).toBe('1');
});

test('one forged history too large to read spoils no other lock in metrics', async () => {
  await plantHeld('dlock:', 'k', 5);
  const lua = `for i = 1, 1000 do
      redis.call('XADD', KEYS[1], '*', 'event', 'released', 'exit', '0', 'cmd', string.rep('x', 10000))
    end`;
  await admin.eval(lua, 1, 'dlock:{k000002}:history');
  const metrics = await timed(['metrics']);
  expect(metrics.code).toBe(69);
  expect(metrics.stderr).toMatch(/^dlock: could not read 1 lock under dlock: \(k000002: history: .*larger than 8 MiB/);
  expectPromtoolPasses(metrics.stdout);
  for (const key of ['k000001', 'k000003', 'k000004', 'k000005'])
    expect(samples(metrics.stdout).get(`dlock_lock_history_entries{key="${key}",prefix="dlock:"}`)).toBe('0');
});
