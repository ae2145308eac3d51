// History (docs/guides/cron.md): every acquisition, release, loss, forced release and
// turned-away attempt is appended to the key's capped stream by the script call that does the
// work (no extra round trip: counted with INFO commandstats), and `dlock history` shows them
// newest first, as a table and as JSON.

import { expect, test } from 'vitest';
import { dlock, start } from '../helpers/cli.js';
import { RedisServer } from '../../support/redis-server.mjs';
import { hold } from '../fixtures/observe.js';
import { useRedisServer } from '../helpers/server.js';

let redis: RedisServer;
useRedisServer((server) => (redis = server));

type Entry = Record<string, string | number | null>;

async function history(key: string, count = 50): Promise<Entry[]> {
  const result = await dlock(['history', '--redis', redis.url, '--count', String(count), '--json', key]);
  expect(result.stderr).toBe('');
  return JSON.parse(result.stdout) as Entry[];
}

test('a scripted scenario: every event in order, with its fields', async () => {
  const key = 'hist-scenario';
  const run = (...args: string[]) => dlock(['run', '--redis', redis.url, ...args]);
  expect((await run(key, '--', 'true')).code).toBe(0);
  expect((await run(key, '--', 'sh', '-c', 'exit 3')).code).toBe(3);

  // A 3s lease: the holder must keep renewing through three dlock starts on a loaded machine.
  const holder = hold(key, { redis: redis.url, flags: ['-t', '3s'] });
  const { pid: childPid } = await holder.child();
  expect((await run('-n', key, '--', 'true')).code).toBe(75);
  expect((await run('--wait', '300ms', key, '--', 'true')).code).toBe(75);
  const forcing = start(['release', '--redis', redis.url, '--force', key]);
  const forcedBy = forcing.process.pid;
  expect((await forcing.result).code).toBe(0);
  expect((await holder.result).code).toBe(76);

  expect((await run('--once-per', '1m', key, '--', 'true')).code).toBe(0);
  const turnedAway = await run('--once-per', '1m', '-E', '0', key, '--', 'true');
  expect(turnedAway).toMatchObject({ code: 0, stderr: '' });

  const entries = (await history(key)).reverse();
  expect(entries.map((e) => e.event)).toEqual([
    'acquired',
    'released',
    'acquired',
    'released',
    'acquired',
    'busy',
    'busy',
    'forced',
    'lost',
    'acquired',
    'released',
    'done',
  ]);
  const [a1, r1, a2, r2, a3, busyNow, busyWait, forced, lost, a4, r4, done] = entries;
  expect(a1).toMatchObject({ fence: '1', slot: null, cmd: 'true' });
  expect(r1).toMatchObject({ exit: 0, fence: '1', pid: a1.pid });
  expect(Number(r1.held_ms)).toBeGreaterThanOrEqual(0);
  expect(a2).toMatchObject({ fence: '2' });
  expect(r2).toMatchObject({ exit: 3, fence: '2' });
  expect(a3).toMatchObject({ fence: '3', pid: holder.process.pid });
  expect(busyNow).toMatchObject({ why: 'held', cmd: 'true' });
  expect(busyWait).toMatchObject({ why: 'wait', cmd: 'true' });
  expect(Number(busyWait.waited_ms)).toBeGreaterThanOrEqual(300);
  expect(forced).toMatchObject({ fence: '3', pid: holder.process.pid, by_pid: forcedBy, now: 'false' });
  expect(lost).toMatchObject({ fence: '3', why: 'forced', pid: holder.process.pid });
  expect(a4).toMatchObject({ fence: '4' });
  expect(r4).toMatchObject({ exit: 0, fence: '4' });
  // Done until that run's start + 1m on the server's clock (PTTL rounds to the ms).
  expect(Math.abs(Number(done.until_ms) - (Number(a4.time_ms) + 60_000))).toBeLessThanOrEqual(2);
  for (const e of entries) expect(typeof e.host).toBe('string');
  // Pids and times are JSON numbers, as status gives them; the 64-bit fence stays a string.
  for (const e of entries) expect(typeof e.pid).toBe('number');
  expect([r1.held_ms, busyWait.waited_ms, done.until_ms].map((value) => typeof value)).toEqual([
    'number',
    'number',
    'number',
  ]);
  // Server time, in order.
  const times = entries.map((e) => Number(e.time_ms));
  expect(times).toEqual([...times].sort((x, y) => x - y));
  expect(childPid).toBeGreaterThan(0);

  const text = await dlock(['history', '--redis', redis.url, '--count', '3', key]);
  expect(text.code).toBe(0);
  const lines = text.stdout.trimEnd().split('\n');
  expect(lines[0]).toMatch(/^TIME \(SERVER, UTC\)\s+EVENT\s+HOST\s+PID\s+DETAILS\s+COMMAND$/);
  expect(lines.slice(1).map((line) => line.split(/\s+/)[1])).toEqual(['done', 'released', 'acquired']);
  expect(lines[2]).toMatch(/exit 0, held \d+ms, fence 4\s+true$/);
});

test('no history: exit 1, and one line saying so', async () => {
  const result = await dlock(['history', '--redis', redis.url, 'hist-never-used']);
  expect(result).toMatchObject({ code: 1, stdout: 'hist-never-used: no history\n', stderr: '' });
});

test('the stream stays capped at 1000 entries, the newest kept', async () => {
  const key = 'hist-capped';
  const client = redis.client();
  const pipeline = client.pipeline();
  for (let i = 0; i < 1000; i++)
    pipeline.xadd(`dlock:{${key}}:history`, '*', 'event', 'released', 'host', 'old', 'pid', String(i));
  await pipeline.exec();
  expect((await dlock(['run', '--redis', redis.url, key, '--', 'true'])).code).toBe(0);
  expect(await client.xlen(`dlock:{${key}}:history`)).toBe(1000);
  const [newest, before] = await history(key, 2);
  expect(newest).toMatchObject({ event: 'released', exit: 0 });
  expect(before).toMatchObject({ event: 'acquired' });
});

test('a plain run costs no extra command: HELLO and two EVALSHA (enter, release); the two XADDs run inside them', async () => {
  const args = ['run', '--redis', redis.url, '-n', 'hist-cost', '--', 'true'];
  // The first run loads the scripts (EVALSHA, NOSCRIPT, EVAL).
  expect((await dlock(args)).code).toBe(0);
  await redis.command('CONFIG', 'RESETSTAT');
  expect((await dlock(args)).code).toBe(0);
  const info = String(await redis.command('INFO', 'commandstats'));
  const calls = Object.fromEntries(
    [...info.matchAll(/^cmdstat_([a-z|]+):calls=(\d+)/gm)].map(([, name, n]) => [name, Number(n)]),
  );
  expect(calls).toMatchObject({ hello: 1, evalsha: 2, xadd: 2 });
  for (const name of ['eval', 'xrevrange', 'xrange', 'xlen', 'multi', 'exec']) expect(calls[name]).toBeUndefined();
});

// Anyone who can write to Redis can add entries: none may crash the view or pass for another field.
test('forged entries: a far-future ID is an unknown time; fields are escaped, never replace id or time', async () => {
  const key = 'hist-forged';
  const stream = `dlock:{${key}}:history`;
  const client = redis.client();
  const forged = ['time_ms', '1', 'time', 'x', 'id', 'y', 'exit', '\x1b[2J', 'held_ms', '1e300'];
  await client.xadd(stream, '1700000000000-0', 'event', 'released', ...forged);
  // Past JavaScript's last date (8.64e15 ms), and past 2^53.
  await client.xadd(stream, '9000000000000000-1', 'event', 'acquired', 'host', 'h\u202e', 'fence', '\x1b]0;t\x07');
  await client.xadd(stream, '9999999999999999-1', 'event', 'done', 'until_ms', '9999999999999999');

  const text = await dlock(['history', '--redis', redis.url, key]);
  expect(text).toMatchObject({ code: 0, stderr: '' });
  const rows = text.stdout.trimEnd().split('\n').slice(1);
  const SERVER_TIME = '2023-11-14T22:13:20.000Z';
  const columns = rows.map((row) => row.split(/\s+/).slice(0, 2));
  expect(columns).toEqual([
    ['?', 'done'],
    ['?', 'acquired'],
    [SERVER_TIME, 'released'],
  ]);
  expect(rows[0]).toContain('done until ?');
  expect(rows[1]).toContain('h\\u202e');
  expect(rows[1]).toContain('fence \\x1b]0;t\\x07');
  expect(rows[2]).toContain('exit \\x1b[2J, held ?');
  expect(text.stdout).not.toMatch(/[\x1b\x07\u202e]/);

  const json = await dlock(['history', '--redis', redis.url, '--json', key]);
  expect(json).toMatchObject({ code: 0, stderr: '' });
  expect(json.stdout).not.toMatch(/[\x1b\x07\u202e]/);
  const [done, acquired, released] = JSON.parse(json.stdout) as Entry[];
  const unknown = { time: null, time_ms: null };
  // A time past any date is no number --json can give: null, like a time it cannot read.
  expect(done).toMatchObject({ id: '9999999999999999-1', ...unknown, event: 'done', until_ms: null });
  expect(acquired).toMatchObject({ id: '9000000000000000-1', ...unknown, host: 'h\u202e', fence: '\x1b]0;t\x07' });
  expect(released).toMatchObject({
    id: '1700000000000-0',
    time: SERVER_TIME,
    time_ms: 1_700_000_000_000,
    held_ms: null,
  });
  // Not a status: null, as the schema says (docs/reference/json-schema.json).
  expect(released.exit).toBeNull();
});

test('a forged reason or event named like a property of every object is only text', async () => {
  const key = 'hist-forged-names';
  const stream = `dlock:{${key}}:history`;
  const client = redis.client();
  await client.xadd(
    stream,
    '1700000000000-0',
    'event',
    'released',
    'exit',
    '124',
    'reason',
    'toString',
    'held_ms',
    '5',
  );
  await client.xadd(stream, '1700000000001-0', 'event', 'constructor', 'host', 'h');
  const text = await dlock(['history', '--redis', redis.url, key]);
  expect(text).toMatchObject({ code: 0, stderr: '' });
  const [other, released] = text.stdout.trimEnd().split('\n').slice(1);
  expect(released).toContain(
    "exit 124 (stopped by dlock (toString); the shell's own status is not known here), held 5ms",
  );
  expect(other.split(/\s+/).slice(1, 3)).toEqual(['constructor', 'h']);
  expect(text.stdout).not.toContain('native code');
});
