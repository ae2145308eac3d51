// dlock hold / unhold and --reason (issue 35): a holder with no process, its reason shown by status, the busy
// line and the history; a --wait run behind it starts within a hand-over of `unhold`; another user's unhold
// needs --force and is recorded as a steal; every bad input is 64 with one line; forged reasons are escaped.

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { hostname, userInfo } from 'node:os';
import { expect, test } from 'vitest';
import { DLOCK, cleanEnv, dlock, start } from '../helpers/cli.js';
import { RedisServer } from '../../support/redis-server.mjs';
import { onlyEvent } from '../fixtures/observe.js';
import { useRedisServer } from '../helpers/server.js';
import { validate } from '../helpers/json-schema.js';

let redis: RedisServer;
useRedisServer((server) => (redis = server));

const me = userInfo().username;
const asNobody = ['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups'];

/** The key's history, newest first, as JSON. */
async function history(key: string): Promise<Record<string, unknown>[]> {
  return JSON.parse((await dlock(['history', '--json', '--redis', redis.url, key])).stdout);
}

test('a hold with a reason blocks a --wait run, shows in status, and the run starts within a hand-over of unhold', async () => {
  const held = await dlock(['hold', '--redis', redis.url, '--reason', 'release 4.2 freeze', '--for', '2h', 'h-freeze']);
  expect(held.code).toBe(0);
  expect(held.stdout).toMatch(
    new RegExp(`^h-freeze: held by ${me}@${hostname()} for 'release 4\\.2 freeze' until \\S+ \\(2h\\), fence \\d+\\n$`),
  );

  const text = await dlock(['status', '--redis', redis.url, 'h-freeze']);
  expect(text.code).toBe(0);
  expect(text.stdout).toContain('h-freeze: held by a hold (dlock hold): no process holds it\n');
  expect(text.stdout).toContain("  reason   'release 4.2 freeze'\n");
  expect(text.stdout).toContain(`  user     ${me}\n`);
  expect(text.stdout).toMatch(/\n {2}pid {6}none\n/);
  expect(text.stdout).not.toContain('not running');
  const json = JSON.parse((await dlock(['status', '--json', '--redis', redis.url, 'h-freeze'])).stdout);
  expect(json.holder).toMatchObject({ reason: 'release 4.2 freeze', user: me, hold: true, pid: null });
  expect(json.holder.until_ms - json.holder.since_ms).toBe(7_200_000);
  expect(json.holder).not.toHaveProperty('pid_alive');

  const run = start(['run', '--redis', redis.url, '--log-format', 'json', 'h-freeze', '--', 'true'], {
    env: cleanEnv(),
  });
  await run.waitFor('"event":"wait-status"');
  expect(run.stderr()).toMatch(/frozen by \S+ for 'release 4\.2 freeze' until \S+, \d+h\d*m?\d*s? left/);
  const unheld = await dlock(['unhold', '--redis', redis.url, 'h-freeze']);
  expect(unheld.code).toBe(0);
  expect(unheld.stdout).toMatch(/^h-freeze: unheld; it was frozen by /);
  const ran = await run.result;
  expect(ran.code).toBe(0);
  const released = (await history('h-freeze')).find((e) => e.event === 'released' && e.by_user === me);
  expect(released).toMatchObject({ cmd: 'dlock hold', by_user: me, by_host: hostname(), user: me });
  const gap = onlyEvent(ran.stderr, 'acquired').ts_ms - (released!.time_ms as number);
  console.log(`unhold's release to the waiting run's "acquired": ${gap.toFixed(2)}ms`);
  expect(gap).toBeLessThan(1_000);
  const acquired = (await history('h-freeze')).filter((e) => e.event === 'acquired');
  expect(acquired.at(-1)).toMatchObject({ reason: 'release 4.2 freeze', user: me, hold: true });
});

test('a hold queued behind a running dlock run takes over when it ends; --reason on run is shown', async () => {
  const env = cleanEnv();
  const runner = start(['run', '--redis', redis.url, '-v', '--reason', 'deploy 4.1', 'h-queue', '--', 'sleep', '60'], {
    env,
  });
  await runner.waitFor('acquired h-queue');
  const status = await dlock(['status', '--redis', redis.url, 'h-queue']);
  expect(status.stdout).toContain("  reason   'deploy 4.1'\n");
  const hold = start(['hold', '--redis', redis.url, '--wait', '1m', '--reason', 'freeze', 'h-queue'], { env });
  await hold.waitFor(/held by \S+ pid \d+ for 'deploy 4\.1'/);
  const line = JSON.parse((await dlock(['status', '--json', '--redis', redis.url, 'h-queue'])).stdout);
  expect(line.line[0]).toMatchObject({ reason: 'freeze', hold: true });
  expect((await dlock(['status', '--redis', redis.url, 'h-queue'])).stdout).toMatch(/REASON\n.*'freeze'\n/);
  runner.process.kill('SIGTERM');
  const held = await hold.result;
  expect(held.code).toBe(0);
  expect(held.stdout).toMatch(/^h-queue: held by \S+ for 'freeze' until dlock unhold, fence \d+\n$/);
  const json = JSON.parse((await dlock(['status', '--json', '--redis', redis.url, 'h-queue'])).stdout);
  expect(json.holder).toMatchObject({ hold: true, until_ms: null, ttl_left_ms: null, reason: 'freeze' });
  expect((await dlock(['unhold', '--redis', redis.url, 'h-queue'])).code).toBe(0);
});

test("another user's unhold is refused without --force; --force is recorded as a steal, with who", async () => {
  await dlock(['hold', '--redis', redis.url, '--reason', 'mine', 'h-steal']);
  const env = cleanEnv();
  const other = (args: string[]) => {
    try {
      return { code: 0, ...capture(execFileSync(asNobody[0], [...asNobody.slice(1), DLOCK, ...args], { env })) };
    } catch (error) {
      const e = error as { status: number; stdout: Buffer; stderr: Buffer };
      return { code: e.status, stdout: e.stdout.toString(), stderr: e.stderr.toString() };
    }
  };
  const refused = other(['unhold', '--redis', redis.url, 'h-steal']);
  expect(refused.code).toBe(64);
  expect(refused.stderr).toMatch(
    new RegExp(
      `^dlock: h-steal is frozen by ${me}@\\S+ for 'mine' until dlock unhold: not your hold \\(you are ` +
        `nobody\\); dlock unhold --force h-steal ends it, recorded as taken by you\\n$`,
    ),
  );
  const forced = other(['unhold', '--force', '--redis', redis.url, 'h-steal']);
  expect(forced.code).toBe(0);
  expect(forced.stdout).toMatch(/^h-steal: unheld \(taken from \S+ with --force\)/);
  const [last] = await history('h-steal');
  expect(last).toMatchObject({ event: 'forced', by_user: 'nobody', user: me, cmd: 'dlock hold' });
  const text = await dlock(['history', '--redis', redis.url, 'h-steal']);
  expect(text.stdout).toMatch(/forced .*by nobody@\S+ \(unhold --force\)/);
  // dlock metrics counts the hold among the acquisitions and the steal among the forced releases.
  const metrics = (await dlock(['metrics', '--redis', redis.url, 'h-steal'])).stdout;
  expect(metrics).toContain('dlock_lock_acquisitions_total{key="h-steal",prefix="dlock:"} 1\n');
  expect(metrics).toContain('dlock_lock_forced_total{key="h-steal",prefix="dlock:"} 1\n');
  const free = await dlock(['unhold', '--redis', redis.url, 'h-steal']);
  expect(free).toMatchObject({ code: 1, stdout: 'h-steal: not held; nothing to unhold\n' });
});

function capture(stdout: Buffer) {
  return { stdout: stdout.toString(), stderr: '' };
}

test('unhold on a key a process holds is refused and points at release --force; hold -n on it is busy', async () => {
  const runner = start(['run', '--redis', redis.url, '-v', 'h-proc', '--', 'sleep', '60'], { env: cleanEnv() });
  await runner.waitFor('acquired h-proc');
  const unhold = await dlock(['unhold', '--redis', redis.url, 'h-proc']);
  expect(unhold.code).toBe(64);
  expect(unhold.stderr).toMatch(/^dlock: h-proc is not held by a hold \(held by .*dlock release --force h-proc\n$/);
  const busy = await dlock(['hold', '--redis', redis.url, '-n', '--reason', 'x', 'h-proc']);
  expect(busy.code).toBe(75);
  expect(busy.stderr).toMatch(/^dlock: h-proc is busy \(held by .*\); not acquired\n$/);
  expect((await dlock(['hold', '--redis', redis.url, '-E', '9', '--reason', 'x', 'h-proc'])).code).toBe(9);
  runner.process.kill('SIGTERM');
  await runner.result;
});

test('a forged reason and user are escaped in text and JSON', async () => {
  const key = 'dlock:{h-forged}';
  const forged = 'evil\x1b[31m\u202e\nline';
  execFileSync('redis-cli', [
    '-p',
    String(redis.port),
    'HSET',
    key,
    'owner',
    'x',
    'fence',
    '1',
    'host',
    'h',
    'pid',
    '',
    'cmd',
    'dlock hold',
    'hold',
    '1',
    'reason',
    forged,
    'user',
    'u\x07',
    'until_ms',
    '',
  ]);
  const text = await dlock(['status', '--redis', redis.url, 'h-forged']);
  expect(text.stdout).toContain("  reason   'evil\\x1b[31m\\u202e\\x0aline'\n");
  expect(text.stdout).toContain('  user     u\\x07\n');
  expect(text.stdout).not.toMatch(/[\x00-\x08\x0b-\x1f\u202e]/);
  const json = await dlock(['status', '--json', '--redis', redis.url, 'h-forged']);
  expect(json.stdout).not.toMatch(/[\x00-\x09\x0b-\x1f\u202e]/);
  expect(JSON.parse(json.stdout).holder).toMatchObject({ reason: forged, user: 'u\x07', hold: true });
  const busy = await dlock(['run', '--redis', redis.url, '-n', 'h-forged', '--', 'true']);
  expect(busy.stderr).toContain("frozen by u\\x07@h for 'evil\\x1b[31m\\u202e\\x0aline' until dlock unhold");
});

test.each([
  [['hold', 'k'], /^dlock: hold needs --reason <text>/],
  [['hold', '--reason', '', 'k'], /^dlock: --reason: must not be empty \(got ""\)\n$/],
  [['hold', '--reason', 'x'.repeat(513), 'k'], /^dlock: --reason: at most 512 characters \(got 513\)\n$/],
  [['hold', '--reason', 'a\nb', 'k'], /^dlock: --reason: must be one line of text without control characters/],
  [['run', '--reason', 'a\tb', 'k', '--', 'true'], /^dlock: --reason: must be one line/],
  [['acquire', '--reason', 'x'.repeat(600), 'k'], /^dlock: --reason: at most 512 characters/],
  [['hold', '--reason', 'x', '--for', '1h', '--until', '18:00', 'k'], /^dlock: --for and --until: choose one\n$/],
  [
    ['hold', '--reason', 'x', '--until', '2001-01-01T00:00', 'k'],
    /^dlock: --until: "2001-01-01T00:00" is in the past\n$/,
  ],
  [['hold', '--reason', 'x', '--until', 'tomorrow', 'k'], /^dlock: --until: not a time; use HH:MM/],
  [['hold', '--reason', 'x', '--for', 'soon', 'k'], /^dlock: --for: not a duration/],
])('bad input %j: 64, one line', async (args, message) => {
  const result = await dlock([...args.slice(0, 1), '--redis', redis.url, ...args.slice(1)]);
  expect(result.code).toBe(64);
  expect(result.stderr).toMatch(message);
  expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
});

test('hold, unhold and --reason on a Redlock quorum: 64, saying why', async () => {
  const two = ['--redis', redis.url, '--redis', 'redis://127.0.0.1:1'];
  const hold = await dlock(['hold', ...two, '--reason', 'x', 'k']);
  expect(hold).toMatchObject({ code: 64 });
  expect(hold.stderr).toMatch(/^dlock: hold needs one Redis .*a quorum keeps no history/);
  expect((await dlock(['run', ...two, '--reason', 'x', 'k', '--', 'true'])).code).toBe(64);
  expect((await dlock(['unhold', ...two, 'k'])).code).toBe(64);
});

test('hold --wait on etcd: 64, saying why (refused before any connection; holds there: etcd.hold)', async () => {
  const etcd = ['--redis', 'etcd://127.0.0.1:1'];
  const hold = await dlock(['hold', ...etcd, '--wait', '1m', '--reason', 'x', 'k']);
  expect(hold.code).toBe(64);
  expect(hold.stderr).toMatch(/^dlock: hold --wait is not built on etcd: .*its hold's own lease.*\n$/);
});

test("acquire --no-keeper --ttl 48h --reason (the issue's freeze): never called a dead pid, its reason shown", async () => {
  const acquired = await dlock([
    'acquire',
    '--redis',
    redis.url,
    '--no-keeper',
    '--ttl',
    '48h',
    '--reason',
    'freeze by hand',
    'h-nokeeper',
  ]);
  expect(acquired.code).toBe(0);
  const text = await dlock(['status', '--redis', redis.url, 'h-nokeeper']);
  expect(text.stdout).not.toContain('not running');
  expect(text.stdout).toContain("  reason   'freeze by hand'\n");
  const busy = await dlock(['run', '--redis', redis.url, '-n', 'h-nokeeper', '--', 'true']);
  expect(busy.code).toBe(75);
  expect(busy.stderr).toMatch(/held by \S+ for 'freeze by hand', for \S+, fence \d+; held across steps/);
  expect(busy.stderr).not.toContain('not running');
  const json = JSON.parse((await dlock(['status', '--json', '--redis', redis.url, 'h-nokeeper'])).stdout);
  expect(json.holder).toMatchObject({ no_keeper: true, reason: 'freeze by hand', user: me });
  expect(json.holder).not.toHaveProperty('pid_alive');
});

test('status --json and history --json of holds, waiting holds and --reason are valid against the schema', async () => {
  const schema = JSON.parse(readFileSync(new URL('../../docs/reference/json-schema.json', import.meta.url), 'utf8'));
  const env = cleanEnv();
  await dlock(['hold', '--redis', redis.url, '--reason', 'first', 'h-schema']);
  const queued = start(['hold', '--redis', redis.url, '--wait', '1m', '--for', '1h', '--reason', 'next', 'h-schema'], {
    env,
  });
  await queued.waitFor(/waiting for h-schema/);
  const status = JSON.parse((await dlock(['status', '--json', '--redis', redis.url, 'h-schema'])).stdout);
  expect(status.line[0]).toMatchObject({ reason: 'next', hold: true, user: me });
  expect(validate(schema, schema.$defs.status, status)).toEqual([]);
  expect((await dlock(['unhold', '--redis', redis.url, 'h-schema'])).code).toBe(0);
  expect((await queued.result).code).toBe(0);
  const listed = JSON.parse((await dlock(['status', '--json', '--redis', redis.url])).stdout);
  expect(validate(schema, schema.$defs.status, listed)).toEqual([]);
  expect(validate(schema, schema.$defs.history, await history('h-schema'))).toEqual([]);
});

test('a uid with no user name (a container\'s --user 65000) is stored as "uid 65000" and unholds its own hold', async () => {
  const asUid = ['setpriv', '--reuid=65000', '--regid=65000', '--clear-groups'];
  const env = cleanEnv({ USER: 'root', LOGNAME: 'root' });
  const held = await dlock(['hold', '--redis', redis.url, '--reason', 'container freeze', 'h-uid'], {
    via: asUid,
    env,
  });
  expect(held.code, held.stderr).toBe(0);
  expect(held.stdout).toMatch(/^h-uid: held by uid 65000@\S+ for 'container freeze'/);
  // $USER says root: never trusted, so root (another user) still needs --force.
  expect((await dlock(['unhold', '--redis', redis.url, 'h-uid'])).code).toBe(64);
  const own = await dlock(['unhold', '--redis', redis.url, 'h-uid'], { via: asUid, env });
  expect(own.code, own.stderr).toBe(0);
});

test("a wait behind a hold estimates its turn by the hold's end, not by the key's usual hold time", async () => {
  const on = ['--redis', redis.url];
  // The key's usual hold: 2 s (one run), far longer than the hold has lasted when the wait reads it.
  expect((await dlock(['run', ...on, 'h-turn', '--', 'sleep', '2'])).code).toBe(0);
  expect((await dlock(['hold', ...on, '--reason', 'freeze', '--for', '1m', 'h-turn'])).code).toBe(0);
  const waited = await dlock(['run', ...on, '--log-format', 'json', '--wait', '300ms', 'h-turn', '--', 'true'], {
    env: cleanEnv({ CI: 'true' }),
  });
  expect(waited.code).toBe(75);
  // Not "about 2 s" from the usual hold: the freeze lasts until its end (or an unhold nobody can foresee).
  expect(onlyEvent(waited.stderr, 'wait-status').turn_ms).toBeGreaterThanOrEqual(50_000);
  expect((await dlock(['unhold', ...on, 'h-turn'])).code).toBe(0);
});
