// Stopping means the whole command (docs/guarantees.md): when dlock stops its command (a lost
// lock, dlock signalled, the SIGKILL after --kill-after) every process the command started is
// stopped too, and so is what `eval "$(dlock acquire ...)"`'s shell is running when its lock is
// lost. Each command runs `sleep` with an argument of its own, found in /proc afterwards.

import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { RedisServer } from '../../support/redis-server.mjs';
import { waitUntil } from '../../support/wait-until.mjs';
import { cleanEnv, DLOCK, type Result } from '../helpers/cli.js';
import { events, onlyEvent, spawnDlock, tempDir, waitForFile } from '../fixtures/observe.js';
import { useRedisServer } from '../helpers/server.js';
import { sleepArg, sleeps } from '../helpers/sleeps.js';

let redis: RedisServer;
useRedisServer((server) => (redis = server));

const started = (arg: string, n: number) => waitUntil(`${n} sleep ${arg}`, () => sleeps(arg).length === n);

/** `dlock run ... key -- sh -c script`, the script's output away from dlock's (a sleep left must not hold the pipe). */
function run(key: string, flags: string[], script: string) {
  const quiet = `exec >/dev/null 2>&1; ${script}`;
  return spawnDlock(['run', '--redis', redis.url, '--log-format', 'json', ...flags, key, '--', 'sh', '-c', quiet]);
}

test('SIGTERM to dlock: the command and both background sleeps are gone, then the lock is released: 143', async () => {
  const arg = sleepArg();
  const dlock = run('tree-term', [], `sleep ${arg} & sleep ${arg} & wait`);
  await started(arg, 2);
  dlock.process.kill('SIGTERM');
  const result = await dlock.result;
  expect(result.code, result.stderr).toBe(143);
  expect(sleeps(arg)).toEqual([]);
  const signal = onlyEvent(result.stderr, 'signal');
  expect(signal).toMatchObject({ signal: 'SIGTERM', reason: 'forwarded' });
  expect(signal.other_pids).toHaveLength(2);
  expect(onlyEvent(result.stderr, 'released').ts_ms - signal.ts_ms).toBeLessThan(1_000);
});

test('the lock lost (its key deleted): every sleep is stopped with the command: 76', async () => {
  const arg = sleepArg();
  // 3s: the lease must outlast starting sh and two sleeps on a loaded machine (a 1.5s one renews
  // with ~330ms to spare; a loss by expiry would add a SIGKILL to the signals checked).
  const dlock = run('tree-lost', ['-t', '3s'], `sleep ${arg} & sleep ${arg} & wait`);
  await started(arg, 2);
  await redis.client().del('dlock:{tree-lost}');
  const result = await dlock.result;
  expect(result.code, result.stderr).toBe(76);
  expect(sleeps(arg)).toEqual([]);
  expect(onlyEvent(result.stderr, 'signal')).toMatchObject({ signal: 'SIGTERM', reason: 'lost' });
  expect(onlyEvent(result.stderr, 'released').ts_ms - onlyEvent(result.stderr, 'lost').ts_ms).toBeLessThan(1_000);
});

test('--on-lost kill: SIGKILL reaches every process of the command', async () => {
  const arg = sleepArg();
  const dlock = run('tree-lost-kill', ['-t', '3s', '--on-lost', 'kill'], `sleep ${arg} & sleep ${arg} & wait`);
  await started(arg, 2);
  await redis.client().del('dlock:{tree-lost-kill}');
  const result = await dlock.result;
  expect(result.code, result.stderr).toBe(76);
  expect(sleeps(arg)).toEqual([]);
  expect(onlyEvent(result.stderr, 'signal')).toMatchObject({ signal: 'SIGKILL', reason: 'lost' });
});

test('a child ignoring SIGTERM with a grandchild ignoring it too: all gone after --kill-after: 137', async () => {
  const arg = sleepArg();
  // `trap "" TERM` is inherited: the inner shell and both sleeps ignore SIGTERM as well.
  const dlock = run(
    'tree-stubborn',
    ['-t', '3s', '--kill-after', '300ms'],
    `trap "" TERM; sh -c "sleep ${arg}; :" & sleep ${arg}; :`,
  );
  await started(arg, 2);
  dlock.process.kill('SIGTERM');
  const result = await dlock.result;
  expect(result.code, result.stderr).toBe(137);
  expect(sleeps(arg)).toEqual([]);
  const [term, kill] = events(result.stderr, 'signal');
  expect(term).toMatchObject({ signal: 'SIGTERM', reason: 'forwarded' });
  expect(kill).toMatchObject({ signal: 'SIGKILL', reason: 'kill-after' });
  expect(kill.other_pids).toHaveLength(3);
  expect(kill.ts_ms - term.ts_ms).toBeGreaterThanOrEqual(300 - 1);
  expect(kill.ts_ms - term.ts_ms).toBeLessThan(300 + 1_500);
});

test('SIGINT to dlock: the shell ends, the background sleep it left (ignoring SIGINT) is stopped before the release: 130', async () => {
  const arg = sleepArg();
  // A non-interactive shell starts background jobs with SIGINT ignored.
  const dlock = run('tree-int', ['-t', '3s', '--kill-after', '1s'], `sleep ${arg} & wait`);
  await started(arg, 1);
  dlock.process.kill('SIGINT');
  const result = await dlock.result;
  expect(result.code, result.stderr).toBe(130);
  expect(sleeps(arg)).toEqual([]);
  expect(events(result.stderr, 'signal').map((e) => [e.signal, e.reason])).toEqual([
    ['SIGINT', 'forwarded'],
    ['SIGTERM', 'left-behind'],
  ]);
  const released = onlyEvent(result.stderr, 'released');
  // Not held back until --kill-after: the sleep ends on the SIGTERM.
  expect(released.ts_ms - events(result.stderr, 'signal')[0].ts_ms).toBeLessThan(900);
});

test('a group the command made reaches a process that left its tree (a double fork inside setsid)', async () => {
  const arg = sleepArg();
  const inner = sleepArg();
  const dlock = run('tree-group', [], `setsid sh -c "(sleep ${arg} &); sleep ${inner}" & wait`);
  await started(arg, 1);
  await started(inner, 1);
  dlock.process.kill('SIGTERM');
  const result = await dlock.result;
  expect(result.code, result.stderr).toBe(143);
  expect(sleeps(arg)).toEqual([]);
  expect(sleeps(inner)).toEqual([]);
});

test('acquire: a lost lock stops the watched shell and the steps it runs', async () => {
  const arg = sleepArg();
  const dir = tempDir();
  const script = `
    eval "$("$D" acquire --redis "$R" --ttl 1500ms --log-format json tree-acquire)"
    echo ok > ${dir}/held
    sleep ${arg} >/dev/null 2>&1 &
    sleep ${arg} >/dev/null 2>&1
    echo after > ${dir}/after
  `;
  const runtime = tempDir();
  const env = cleanEnv({ D: DLOCK, R: redis.url, XDG_RUNTIME_DIR: runtime });
  const shell = spawn('sh', ['-c', script], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  shell.stderr.on('data', (d) => (stderr += d));
  const ended = new Promise<Result>((resolve) =>
    shell.on('close', (code, signal) => resolve({ code, signal, stdout: '', stderr })),
  );
  try {
    await waitForFile(join(dir, 'held'));
    await started(arg, 2);
    await redis.client().del('dlock:{tree-acquire}');
    const result = await ended;
    expect(result.signal, result.stderr).toBe('SIGTERM');
    expect(sleeps(arg)).toEqual([]);
    const signal = onlyEvent(result.stderr, 'signal');
    expect(signal).toMatchObject({ signal: 'SIGTERM', reason: 'lost', pid: shell.pid });
    expect(signal.other_pids).toHaveLength(2);
  } finally {
    shell.kill('SIGKILL');
  }
});
