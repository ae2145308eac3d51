// A section covers its background steps (docs/guarantees.md, docs/guides/shell-scripts.md): when
// the shell that runs `eval "$(dlock acquire k)"` exits while steps it started with `&` still run,
// the keeper holds the lock (renewed, watched) until they are gone, as `dlock run` does for its
// command; a lost lock stops them; a daemon started with `setsid -f` opts out; an explicit
// `dlock release` releases at once. Each step runs `sleep` with an argument of its own, found in /proc.

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { cleanEnv, DLOCK, dlock, type Result } from '../helpers/cli.js';
import { RedisServer } from '../../support/redis-server.mjs';
import { waitUntil } from '../../support/wait-until.mjs';
import { events, isAlive, onlyEvent, removeTempDirs, tempDir, waitForFile } from '../fixtures/observe.js';
import { sleepArg, sleeps } from '../helpers/sleeps.js';

let server: RedisServer;
let runtime: string;

beforeAll(async () => {
  server = await RedisServer.start();
  runtime = tempDir();
});
const scripts = new Set<ReturnType<typeof spawn>>();
afterEach(() => {
  for (const script of scripts) script.kill('SIGKILL');
  scripts.clear();
});
afterAll(async () => {
  await server.close();
  removeTempDirs();
});

/** The one live `sleep <arg>`, once it runs. */
const started = (arg: string) => waitUntil(`sleep ${arg}`, () => sleeps(arg)[0]);

interface Script {
  pid: number;
  /** The shell has exited (its keeper may still run: it holds the stderr pipe). */
  exited: Promise<number | null>;
  /** Once every holder of its pipes (the keeper too) is gone. */
  result: Promise<Result>;
  stderr: () => string;
}

/** `sh -c script`, with $D (dlock) and $R (the Redis URL) set; its steps' output goes elsewhere. */
function sh(script: string): Script {
  const env = cleanEnv({ XDG_RUNTIME_DIR: runtime, D: DLOCK, R: server.url });
  const child = spawn('sh', ['-c', script], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  scripts.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const result = new Promise<Result>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { pid: child.pid!, exited, result, stderr: () => stderr };
}

/** The section's first line: acquire `key` with a 3 s lease (it must survive process starts), JSON events. */
const acquire = (key: string, flags = '') =>
  `eval "$("$D" acquire --redis "$R" --ttl 3s --log-format json ${flags} ${key})" || exit 9`;

/** A second holder that does not wait: 75 while the lock is held. */
const contend = (key: string) => dlock(['run', '-n', '--redis', server.url, key, '--', 'true'], { env: cleanEnv() });

/** Resolves once the keeper said what it does now that the shell is gone: holds on (background) or released. */
const keeperDecided = (script: Script) =>
  waitUntil('a background or released event', () =>
    ['background', 'released'].some((name) => events(script.stderr(), name).length > 0),
  );

test('a background step left by the section’s script keeps the lock until it is gone, its subshell too', async () => {
  const dir = tempDir();
  const arg = sleepArg();
  // A subshell (a fork of the shell: it does not carry DLOCK_TOKEN itself) whose sleep does.
  const script = sh(`${acquire('sec-bg')}
    (sleep ${arg}; echo after > ${dir}/after) >/dev/null 2>&1 &
    echo $! > ${dir}/subshell.tmp; mv ${dir}/subshell.tmp ${dir}/subshell
    exit 3`);
  expect(await script.exited).toBe(3);
  const pid = await started(arg);
  const subshell = Number(await waitForFile(join(dir, 'subshell')));
  await keeperDecided(script);
  expect(events(script.stderr(), 'released')).toEqual([]);
  expect((await contend('sec-bg')).code).toBe(75);
  const background = onlyEvent(script.stderr(), 'background');
  expect(background).toMatchObject({ key: 'sec-bg', pid: script.pid });
  expect([...(background.other_pids as number[])].sort()).toEqual([subshell, pid].sort());
  process.kill(pid, 'SIGTERM');
  const { stderr } = await script.result;
  // Released after the subshell's last step: its file was there first.
  expect(existsSync(join(dir, 'after'))).toBe(true);
  expect(onlyEvent(stderr, 'released')).toMatchObject({ key: 'sec-bg', released: true, exit: null });
  expect(events(stderr, 'signal')).toEqual([]);
  expect((await contend('sec-bg')).code).toBe(0);
});

test('the lock lost (release --force) while only background steps run: they get SIGTERM', async () => {
  const arg = sleepArg();
  const script = sh(`${acquire('sec-lost')}; sleep ${arg} >/dev/null 2>&1 & exit 0`);
  await script.exited;
  const pid = await started(arg);
  await keeperDecided(script);
  const forced = await dlock(['release', '--force', '--redis', server.url, 'sec-lost'], { env: cleanEnv() });
  expect(forced.code, forced.stderr).toBe(0);
  const { stderr } = await script.result;
  expect(isAlive(pid)).toBe(false);
  expect(onlyEvent(stderr, 'lost')).toMatchObject({ key: 'sec-lost', reason: 'refused', signal: 'SIGTERM' });
  expect(onlyEvent(stderr, 'signal')).toMatchObject({ signal: 'SIGTERM', reason: 'lost', other_pids: [pid] });
});

test('a daemon started with setsid -f is not waited for; a background step beside it is', async () => {
  const step = sleepArg();
  const daemon = sleepArg();
  const script = sh(`${acquire('sec-daemon')}
    sleep ${step} >/dev/null 2>&1 &
    setsid -f sleep ${daemon} >/dev/null 2>&1
    exit 0`);
  await script.exited;
  const pid = await started(step);
  const daemonPid = await started(daemon);
  await keeperDecided(script);
  expect(onlyEvent(script.stderr(), 'background').other_pids).toEqual([pid]);
  expect((await contend('sec-daemon')).code).toBe(75);
  process.kill(pid, 'SIGTERM');
  const { stderr } = await script.result;
  expect(onlyEvent(stderr, 'released')).toMatchObject({ key: 'sec-daemon', released: true });
  expect(isAlive(daemonPid)).toBe(true);
  expect((await contend('sec-daemon')).code).toBe(0);
});

test('an explicit dlock release releases at once, background steps or not (from one of them, too)', async () => {
  const first = sleepArg();
  const second = sleepArg();
  const dir = tempDir();
  // The step releases the section itself half-way, and runs on unprotected.
  const script = sh(`${acquire('sec-release')}
    (sleep ${first}; "$D" release --redis "$R" sec-release; echo $? > ${dir}/released.tmp; mv ${dir}/released.tmp ${dir}/released; sleep ${second}) >/dev/null 2>&1 &
    exit 0`);
  await script.exited;
  const pid = await started(first);
  await keeperDecided(script);
  expect((await contend('sec-release')).code).toBe(75);
  process.kill(pid, 'SIGTERM');
  expect(await waitForFile(join(dir, 'released'))).toBe('0\n');
  const later = await started(second);
  const { stderr } = await script.result;
  expect(onlyEvent(stderr, 'released')).toMatchObject({ key: 'sec-release', by: 'release' });
  expect(isAlive(later)).toBe(true);
  expect((await contend('sec-release')).code).toBe(0);

  // In the script itself: `dlock release` while a step started with & still runs.
  const step = sleepArg();
  const direct = sh(`${acquire('sec-release2')}
    sleep ${step} >/dev/null 2>&1 &
    "$D" release --redis "$R" sec-release2 || exit 8
    exit 0`);
  expect(await direct.exited).toBe(0);
  const { stderr: directErr } = await direct.result;
  expect(events(directErr, 'background')).toEqual([]);
  expect(onlyEvent(directErr, 'released')).toMatchObject({ key: 'sec-release2', by: 'release' });
  expect(isAlive(await started(step))).toBe(true);
  expect((await contend('sec-release2')).code).toBe(0);
});

test('--max-hold running out while only background steps run stops them (SIGTERM), then releases: history 124', async () => {
  const arg = sleepArg();
  const script = sh(`${acquire('sec-max-hold', '--max-hold 2s')}; sleep ${arg} >/dev/null 2>&1 & exit 0`);
  await script.exited;
  const pid = await started(arg);
  const { stderr } = await script.result;
  expect(isAlive(pid)).toBe(false);
  const maxHold = onlyEvent(stderr, 'max-hold');
  expect(maxHold.ts_ms - onlyEvent(stderr, 'acquired').ts_ms).toBeGreaterThanOrEqual(1900);
  expect(onlyEvent(stderr, 'signal')).toMatchObject({ signal: 'SIGTERM', reason: 'max-hold', other_pids: [pid] });
  expect(onlyEvent(stderr, 'released')).toMatchObject({ exit: 124 });
  expect(onlyEvent(stderr, 'released').ts_ms).toBeGreaterThanOrEqual(maxHold.ts_ms);
  const history = await dlock(['history', '--redis', server.url, '--json', 'sec-max-hold'], { env: cleanEnv() });
  expect(JSON.parse(history.stdout)[0]).toMatchObject({ event: 'released', exit: 124, reason: 'max-hold' });
});

test('SIGTERM to the keeper while only background steps run: they get SIGTERM, SIGKILL after the grace, then it releases', async () => {
  const arg = sleepArg();
  // The step ignores SIGTERM (inherited): only the SIGKILL ends it, after the grace (ttl/3: 1 s).
  const script = sh(`${acquire('sec-term')}; trap "" TERM; sleep ${arg} >/dev/null 2>&1 & exit 0`);
  await script.exited;
  const pid = await started(arg);
  await keeperDecided(script);
  // Still held, by the keeper: its pid is in the lock (never 0: that would signal this process group).
  const keeper = Number(await server.client().hget('dlock:{sec-term}', 'pid'));
  expect(keeper).toBeGreaterThan(1);
  process.kill(keeper, 'SIGTERM');
  const { stderr } = await script.result;
  expect(isAlive(pid)).toBe(false);
  const [term, kill] = events(stderr, 'signal');
  expect(term).toMatchObject({ signal: 'SIGTERM', reason: 'forwarded', other_pids: [pid] });
  expect(kill).toMatchObject({ signal: 'SIGKILL', reason: 'kill-after', other_pids: [pid] });
  expect(kill.ts_ms - term.ts_ms).toBeGreaterThanOrEqual(1000 - 50);
  expect(onlyEvent(stderr, 'released').ts_ms).toBeGreaterThanOrEqual(kill.ts_ms);
});

test('two sections in one script: a step started after both holds both (the first token is in its DLOCK_HELD)', async () => {
  const arg = sleepArg();
  const script = sh(`${acquire('sec-two-a')}
    ${acquire('sec-two-b')}
    sleep ${arg} >/dev/null 2>&1 &
    exit 0`);
  await script.exited;
  const pid = await started(arg);
  await waitUntil('both keepers hold on', () => events(script.stderr(), 'background').length === 2);
  expect(events(script.stderr(), 'released')).toEqual([]);
  expect((await contend('sec-two-a')).code).toBe(75);
  expect((await contend('sec-two-b')).code).toBe(75);
  process.kill(pid, 'SIGTERM');
  const { stderr } = await script.result;
  expect(
    events(stderr, 'released')
      .map((event) => event.key)
      .sort(),
  ).toEqual(['sec-two-a', 'sec-two-b']);
  expect((await contend('sec-two-a')).code).toBe(0);
});
