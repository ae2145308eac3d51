// The lock covers the whole job, as flock's does (docs/guarantees.md): `dlock run` holds it until
// every process of the command is gone, not only its first one: a background child keeps it held
// (renewed, and stopped on a lost lock or --max-hold), even once reparented away from the tree, and
// only a process that leaves the session (setsid -f) opts out. Each command runs `sleep` with an
// argument of its own, found in /proc.

import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { RedisServer } from '../../support/redis-server.mjs';
import { waitUntil } from '../../support/wait-until.mjs';
import { dlock } from '../helpers/cli.js';
import { events, isAlive, onlyEvent, spawnDlock, waitForDeath } from '../fixtures/observe.js';
import { useRedisServer } from '../helpers/server.js';
import { sleepArg, sleeps } from '../helpers/sleeps.js';

let redis: RedisServer;
useRedisServer((server) => (redis = server));

/** The one live `sleep <arg>`, once it runs. */
const started = (arg: string) => waitUntil(`sleep ${arg}`, () => sleeps(arg)[0]);

/** `dlock run ... key -- <shell> -c script`, the script's output away from dlock's (a sleep left must not hold the pipe). */
function run(key: string, flags: string[], script: string, shell = 'sh') {
  const quiet = `exec >/dev/null 2>&1; ${script}`;
  return spawnDlock(['run', '--redis', redis.url, '--log-format', 'json', ...flags, key, '--', shell, '-c', quiet]);
}

/** A second holder that does not wait: 75 while the lock is held. */
const tryRun = (key: string) => dlock(['run', '--redis', redis.url, '-n', key, '--', 'true']);

const BACKGROUND = '"event":"background"';

test('a background child keeps the lock held until it is gone; the exit status is the first process’s', async () => {
  const arg = sleepArg();
  const first = run('bg-held', ['-t', '3s'], `sleep ${arg} & exit 3`);
  await first.waitFor(BACKGROUND);
  const pid = await started(arg);
  expect(onlyEvent(first.stderr(), 'background')).toMatchObject({ key: 'bg-held', exit: 3, other_pids: [pid] });
  expect(events(first.stderr(), 'released')).toEqual([]);
  expect((await tryRun('bg-held')).code).toBe(75);
  process.kill(pid, 'SIGTERM');
  const result = await first.result;
  expect(result.code, result.stderr).toBe(3);
  expect(onlyEvent(result.stderr, 'released')).toMatchObject({ released: true, exit: 3 });
  expect(events(result.stderr, 'signal')).toEqual([]);
  expect((await tryRun('bg-held')).code).toBe(0);
});

test('-v says which background processes the lock waits for', async () => {
  const arg = sleepArg();
  const first = spawnDlock([
    'run',
    '--redis',
    redis.url,
    '-v',
    'bg-text',
    '--',
    'sh',
    '-c',
    `sleep ${arg} >/dev/null 2>&1 &`,
  ]);
  await first.waitFor(/background process/);
  const pid = await started(arg);
  expect(first.stderr()).toMatch(new RegExp(`holding bg-text until .*1 background process.*\\(pid ${pid}\\)`));
  process.kill(pid, 'SIGKILL');
  expect((await first.result).code).toBe(0);
});

test('a background job in a process group of its own (set -m), reparented when its shell exited, keeps the lock', async () => {
  const arg = sleepArg();
  const first = run('bg-group', ['-t', '3s'], `set -m; sleep ${arg} & exit 0`, 'bash');
  await first.waitFor(BACKGROUND);
  const pid = await started(arg);
  const [, ppid, pgid] = readFileSync(`/proc/${pid}/stat`, 'latin1').split(') ')[1].split(' ').map(Number);
  expect(pgid).toBe(pid); // its own group, not dlock's
  expect(ppid).not.toBe(first.process.pid); // reparented away (to init or a subreaper)
  expect((await tryRun('bg-group')).code).toBe(75);
  process.kill(pid, 'SIGTERM');
  expect((await first.result).code).toBe(0);
  expect((await tryRun('bg-group')).code).toBe(0);
});

test('the lock lost while only background children run: SIGTERM, SIGKILL after --kill-after, then released: 76', async () => {
  const arg = sleepArg();
  // The sleep inherits the ignored SIGTERM: only the SIGKILL ends it.
  const first = run('bg-lost', ['-t', '3s', '--kill-after', '300ms'], `trap "" TERM; sleep ${arg} &`);
  await first.waitFor(BACKGROUND);
  const pid = await started(arg);
  await redis.client().del('dlock:{bg-lost}');
  const result = await first.result;
  expect(result.code, result.stderr).toBe(76);
  expect(isAlive(pid)).toBe(false);
  const [term, kill] = events(result.stderr, 'signal');
  expect(term).toMatchObject({ signal: 'SIGTERM', reason: 'lost', other_pids: [pid] });
  expect(kill).toMatchObject({ signal: 'SIGKILL', reason: 'kill-after', other_pids: [pid] });
  // The grace's timer counts from the event loop's clock, read before the walk that sent SIGTERM.
  expect(kill.ts_ms - term.ts_ms).toBeGreaterThanOrEqual(300 - 50);
  expect(onlyEvent(result.stderr, 'released').ts_ms).toBeGreaterThanOrEqual(kill.ts_ms);
});

test('--max-hold running out while only background children run stops them: 124', async () => {
  const arg = sleepArg();
  const first = run('bg-max-hold', ['-t', '3s', '--max-hold', '1500ms'], `sleep ${arg} &`);
  await first.waitFor(BACKGROUND);
  const pid = await started(arg);
  const result = await first.result;
  expect(result.code, result.stderr).toBe(124);
  expect(isAlive(pid)).toBe(false);
  expect(onlyEvent(result.stderr, 'max-hold')).toBeDefined();
  expect(onlyEvent(result.stderr, 'signal')).toMatchObject({
    signal: 'SIGTERM',
    reason: 'max-hold',
    other_pids: [pid],
  });
  expect(onlyEvent(result.stderr, 'released')).toMatchObject({ exit: 124 });
});

test('SIGTERM to dlock while only background children run stops them; the exit status stays the first process’s', async () => {
  const arg = sleepArg();
  const first = run('bg-term', ['-t', '3s'], `sleep ${arg} & exit 0`);
  await first.waitFor(BACKGROUND);
  const pid = await started(arg);
  first.process.kill('SIGTERM');
  const result = await first.result;
  expect(result.code, result.stderr).toBe(0);
  expect(isAlive(pid)).toBe(false);
  expect(onlyEvent(result.stderr, 'signal')).toMatchObject({
    signal: 'SIGTERM',
    reason: 'forwarded',
    other_pids: [pid],
  });
});

test('opting out: a daemon that leaves the session (setsid -f) runs on; what stays in it is waited for', async () => {
  const daemon = sleepArg();
  const step = sleepArg();
  const first = run('bg-setsid', ['-t', '3s'], `setsid -f sleep ${daemon}; sleep ${step} &`);
  await first.waitFor(BACKGROUND);
  const stepPid = await started(step);
  const daemonPid = await started(daemon);
  expect(onlyEvent(first.stderr(), 'background').other_pids).toEqual([stepPid]);
  process.kill(stepPid, 'SIGTERM');
  const result = await first.result;
  expect(result.code, result.stderr).toBe(0);
  expect(isAlive(daemonPid)).toBe(true);
  expect((await tryRun('bg-setsid')).code).toBe(0);
});

test('a daemon started with setsid -f alone: released at once, the daemon still running', async () => {
  const daemon = sleepArg();
  const result = await run('bg-daemon', [], `setsid -f sleep ${daemon}`).result;
  expect(result.code, result.stderr).toBe(0);
  expect(events(result.stderr, 'background')).toEqual([]);
  const pid = await started(daemon);
  expect(isAlive(pid)).toBe(true);
  process.kill(pid, 'SIGKILL');
  await waitForDeath(pid);
});
