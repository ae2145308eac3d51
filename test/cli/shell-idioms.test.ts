// The shell idioms README, `acquire --help` and the man page teach, on their failure paths, in
// real dash, bash and zsh: whenever `dlock acquire` fails, the steps after the idiom never run
// and the script ends with acquire's own exit status (busy, -E, --wait ran out, unreachable,
// usage, interrupted), with and without `set -e`, also in a function called from ||, if, && or !
// (where set -e is off); an interactive shell survives a failed eval.
// fish's own form (the guide's) is checked the same way.

import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { cleanEnv, DLOCK, start, type Result, type Running } from '../helpers/cli.js';
import { useRedisServer } from '../helpers/server.js';
import { freePort, type RedisServer } from '../../support/redis-server.mjs';
import { waitUntil } from '../../support/wait-until.mjs';
import { HOLD, isAlive, tempDir, waitForFile } from '../fixtures/observe.js';

let server: RedisServer;
useRedisServer((started) => (server = started));

/** A port nothing listens on: Redis unreachable. */
let closedPort: number;
/** Hold `busy` and `deploy` for the whole file (not one test's leftovers): every acquire is turned away. */
const holders: Running[] = [];
beforeAll(async () => {
  closedPort = await freePort();
  for (const key of ['busy', 'deploy']) {
    const dir = tempDir();
    holders.push(start(['run', '--redis', server.url, key, '--', HOLD, dir]));
    await waitForFile(`${dir}/pid`);
  }
});
afterAll(() => holders.forEach((holder) => holder.process.kill('SIGKILL')));

const SHELLS = ['dash', 'bash', 'zsh'] as const;
type Shell = (typeof SHELLS)[number];

/** The documented forms; ACQ stands for the `dlock acquire ...` command line. */
const IDIOMS = {
  'eval || exit': 'eval "$(ACQ)" || exit',
  'set -e; eval': 'set -e\neval "$(ACQ)"',
  'set -e; eval || exit': 'set -e\neval "$(ACQ)" || exit',
};

interface ShellRun {
  result: Promise<Result>;
  /** The value of IDIOM_SCRIPT in its environment. */
  mark: string;
  stderr: () => string;
}

/** Marks a script's processes, so the test can find the acquire it runs. */
let scripts = 0;

/** `shell -c script` with $D (dlock), $R (the server) and $CLOSED (a port with nothing on it). */
function runShell(shell: Shell, script: string, args: string[] = [], extra: Record<string, string> = {}): ShellRun {
  const mark = `${process.pid}-${++scripts}`;
  const closed = `redis://127.0.0.1:${closedPort}`;
  const env = cleanEnv({ D: DLOCK, R: server.url, CLOSED: closed, IDIOM_SCRIPT: mark, ...extra });
  const argv = [...(shell === 'zsh' ? ['-f'] : []), ...args, '-c', script];
  const child = spawn(shell, argv, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const result = new Promise<Result>((resolve) => {
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { result, mark, stderr: () => stderr };
}

/** The idiom with `acquire`, then the steps: they print STEPS RAN if they run. */
function idiomScript(idiom: string, acquire: string): string {
  const key = acquire.split(' ').at(-1);
  const steps = `echo "STEPS RAN with DLOCK_TOKEN=$DLOCK_TOKEN"\n"$D" release ${key}`;
  return `${idiom.replace('ACQ', `"$D" acquire ${acquire}`)}\n${steps}`;
}

/** Each idiom in each shell, started at once. */
function everyIdiom(acquire: string): { shell: Shell; name: string; run: ShellRun }[] {
  return SHELLS.flatMap((shell) => {
    const scripts = Object.entries(IDIOMS).map(([name, idiom]) => ({ name, script: idiomScript(idiom, acquire) }));
    return scripts.map(({ name, script }) => ({ shell, name, run: runShell(shell, script) }));
  });
}

/** Every idiom in every shell with `acquire`: each stops before its steps, with status `code`. */
async function expectStops(acquire: string, code: number, stderr: RegExp): Promise<void> {
  const runs = everyIdiom(acquire);
  for (const { shell, name, run } of runs) {
    const result = await run.result;
    const what = `${shell}, ${name}: ${result.stderr}`;
    expect(result.stdout, what).toBe('');
    expect(result.code, what).toBe(code);
    expect(result.stderr, what).toMatch(stderr);
  }
}

describe('each failure of acquire stops the script with its exit status, in dash, bash and zsh', () => {
  test('busy (-n): 75', async () => {
    await expectStops('--redis "$R" -n busy', 75, /^dlock: busy is busy \(held by .*\); not acquired\n$/);
  });

  test('busy with -E 3: 3', async () => {
    await expectStops('--redis "$R" -n -E 3 busy', 3, /^dlock: busy is busy .*; not acquired\n$/);
  });

  test('--wait ran out: 75', async () => {
    // Without a terminal a wait may print its status line first (if the holder was read in time).
    await expectStops(
      '--redis "$R" --wait 300ms busy',
      75,
      /^(dlock: waiting for busy \(.*\)\n)?dlock: busy is busy .*\n$/,
    );
  });

  test('Redis unreachable: 69', async () => {
    const refused = /^dlock: cannot reach redis:\/\/127\.0\.0\.1:\d+: connection refused\n$/;
    await expectStops('--redis "$CLOSED" --connect-timeout 1s free', 69, refused);
  });

  test('usage errors: 64, from the option parser and from the checks after it', async () => {
    await expectStops('--bogus free', 64, /^dlock: unknown option '--bogus'\n$/);
    await expectStops('--ttl 0 free', 64, /^dlock: --ttl: .*\(got "0"\)\n$/);
    // acquire has no --once-per (a section has no exit status to call a success).
    await expectStops('--once-per 1h free', 64, /^dlock: unknown option '--once-per'\n$/);
  });

  test('-E 0 would let the steps run unlocked: a usage error for eval, allowed with --format json', async () => {
    const refused = /^dlock: --conflict-exit-code: not 0 for eval: .*\(got "0"\)\n$/;
    await expectStops('--redis "$R" -n -E 0 busy', 64, refused);
    const script = '"$D" acquire --redis "$R" -n -E 0 --format json busy; echo "status $?"';
    const json = await runShell('dash', script).result;
    expect(json.stdout).toBe('status 0\n');
  });
});

describe('set -e in a function called from ||, if, && or ! (where POSIX turns set -e off): the steps still never run', () => {
  const CALLERS = {
    '||': 'f || echo "f failed"',
    if: 'if f; then echo "f done"; else echo "f failed"; fi',
    '&&': 'f && echo "f done"',
    '!': '! f',
  };

  test('busy: every caller in dash, bash and zsh stops the script with 75 before the steps', async () => {
    const acquire = '"$D" acquire --redis "$R" -n deploy';
    const runs = SHELLS.flatMap((shell) =>
      Object.entries(CALLERS).map(([caller, call]) => {
        const script = `set -e\nf() {\n  eval "$(${acquire})"\n  echo unprotected\n}\n${call}\necho after`;
        return { shell, caller, run: runShell(shell, script) };
      }),
    );
    for (const { shell, caller, run } of runs) {
      const result = await run.result;
      const what = `${shell}, f called from ${caller}: ${result.stderr}`;
      expect(result.stdout, what).toBe('');
      expect(result.code, what).toBe(75);
    }
  });

  test('a script that handles busy itself checks the substitution before eval: it runs its else branch', async () => {
    const script =
      'if vars=$("$D" acquire --redis "$R" -n deploy); then eval "$vars"; echo held; else echo "busy: $?"; fi\necho after';
    const runs = SHELLS.map((shell) => ({ shell, run: runShell(shell, script) }));
    for (const { shell, run } of runs) {
      const result = await run.result;
      expect(result.stdout, `${shell}: ${result.stderr}`).toBe('busy: 75\nafter\n');
      expect(result.code).toBe(0);
    }
  });
});

describe('fish (docs/guides/shell-scripts.md): the steps never run when acquire fails', () => {
  /** `fish -c script` with $D, $R and $CLOSED as runShell sets them. */
  function fish(script: string): Promise<Result> {
    const env = cleanEnv({ D: DLOCK, R: server.url, CLOSED: `redis://127.0.0.1:${closedPort}` });
    const child = spawn('fish', ['--no-config', '-c', script], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    return new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  }
  const steps = 'eval $vars\necho "STEPS RAN with $DLOCK_TOKEN"';

  test.each([
    ['busy', '--redis $R -n busy', 75],
    ['busy with -E 3', '--redis $R -n -E 3 busy', 3],
    ['Redis unreachable', '--redis $CLOSED --connect-timeout 1s free', 69],
    ['a usage error', '--ttl 0 free', 64],
  ])('set vars (dlock acquire …); or exit $status — %s: %i', async (_what, acquire, code) => {
    const result = await fish(`set vars ($D acquire ${acquire}); or exit $status\n${steps}`);
    expect(result.stdout, result.stderr).toBe('');
    expect(result.code).toBe(code);
  });

  test('eval (dlock acquire …); or exit — fish rejects the failure line: stopped, with 123', async () => {
    const result = await fish(`eval ($D acquire --redis $R -n busy); or exit\n${steps}`);
    expect(result.stdout).toBe('');
    expect(result.code).toBe(123);
  });

  test('when it is held, the steps run with the variables, and release ends the section', async () => {
    const result = await fish(
      `set vars ($D acquire --redis $R fish-free); or exit $status\n${steps}\n$D release --redis $R fish-free`,
    );
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(/^STEPS RAN with [0-9a-f]{32}\n$/);
  });
});

/** The pid of the `dlock acquire` (not its keeper) that the script marked `mark` runs. */
function acquirePid(mark: string): number | undefined {
  for (const pid of readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)) {
    try {
      const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      const keeper = environ.some((variable) => variable.startsWith('DLOCK_KEEPER='));
      const ours = environ.includes(`IDIOM_SCRIPT=${mark}`) && argv.includes('acquire');
      if (ours && !keeper && isAlive(pid)) return pid;
    } catch {
      // Gone meanwhile.
    }
  }
  return undefined;
}

test.each([
  ['SIGINT', 130],
  ['SIGTERM', 143],
] as const)('interrupted while waiting (%s to acquire): every idiom stops with %i', async (signal, code) => {
  const acquire = '--redis "$R" --wait 60s --log-format json -v busy';
  const runs = everyIdiom(acquire);
  for (const { run } of runs) {
    await waitUntil('the acquire to wait', () => run.stderr().includes('"event":"waiting"'), { timeoutMs: 30_000 });
    process.kill((await waitUntil('the acquire pid', () => acquirePid(run.mark)))!, signal);
  }
  for (const { shell, name, run } of runs) {
    const result = await run.result;
    expect(result.stdout, `${shell}, ${name}: ${result.stderr}`).toBe('');
    expect(result.code, `${shell}, ${name}: ${result.stderr}`).toBe(code);
  }
});

test.each(['bash', 'zsh'] as const)('an interactive %s survives a failed eval and reads its status', async (shell) => {
  const script = 'eval "$("$D" acquire --redis "$R" -n busy)"; echo "status $? token=$DLOCK_TOKEN"; echo alive';
  const run = runShell(shell, script, shell === 'bash' ? ['--norc', '-i'] : ['-i']);
  const result = await run.result;
  expect(result.stdout, result.stderr).toBe('status 75 token=\nalive\n');
  expect(result.code).toBe(0);
});

test('--format json: a failed acquire leaves stdout empty; the CI step stops (bash -e, as on GitHub)', async () => {
  const acquire = '"$D" acquire --no-keeper --wait 300ms --ttl 30m --format json --redis "$R" busy > lock.json';
  const step = `${acquire}\necho "token=$(jq -r .token lock.json)"`;
  const dir = tempDir();
  const run = runShell('bash', `cd ${dir}\n${step}`, ['-e']);
  const result = await run.result;
  expect(result.code, result.stderr).toBe(75);
  expect(result.stdout).toBe('');
  expect(readFileSync(`${dir}/lock.json`, 'utf8')).toBe('');
});

/** Run `acquire` in `shell`, then `steps`; SIGKILL the keeper once the steps began. */
async function killKeeperOf(shell: Shell, key: string, acquire: string, steps: string): Promise<KeeperKilled> {
  const dir = tempDir();
  const run = runShell(shell, `eval "$(${acquire})" || exit\n: > ${dir}/held\n${steps}`);
  await waitForFile(`${dir}/held`, 30_000);
  const admin = server.client();
  const keeper = Number(await admin.hget(`dlock:{${key}}`, 'pid'));
  const killedAt = Date.now();
  process.kill(keeper, 'SIGKILL');
  return { result: await run.result, killedAt };
}

interface KeeperKilled {
  result: Result;
  /** Date.now() just before the SIGKILL. */
  killedAt: number;
}

/** The one `lost` event in a JSON log. */
function lostEvent(stderr: string): Record<string, unknown> {
  const lost = stderr
    .split('\n')
    .filter((line) => line.includes('"event":"lost"'))
    .map((line) => JSON.parse(line));
  expect(lost, stderr).toHaveLength(1);
  return lost[0] as Record<string, unknown>;
}

test.each(SHELLS)('the keeper SIGKILLed: %s is sent SIGTERM at once and the steps after stop', async (shell) => {
  const key = `keeper-${shell}`;
  const acquire = `"$D" acquire --redis "$R" --ttl 10s --log-format json ${key}`;
  const steps = 'i=0; while [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done; echo "STEPS RAN"';
  const { result, killedAt } = await killKeeperOf(shell, key, acquire, steps);
  expect(result.signal, result.stderr).toBe('SIGTERM');
  expect(result.stdout).toBe('');
  const lost = lostEvent(result.stderr);
  expect(lost).toMatchObject({ key, reason: 'keeper-died', signal: 'SIGTERM' });
  const died = /its keeper \(pid \d+\) died, so nothing renews it and it expires within 10s; sending SIGTERM/;
  expect(lost.message).toMatch(died);
  expect((lost.ts_ms as number) - killedAt).toBeLessThan(1_000);
});

test('the keeper SIGKILLed under --signal HUP: its sentinel sends SIGHUP, not SIGTERM', async () => {
  const acquire = '"$D" acquire --redis "$R" --ttl 10s --signal HUP --log-format json keeper-hup';
  const steps = 'i=0; while [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done; echo "STEPS RAN"';
  const { result } = await killKeeperOf('dash', 'keeper-hup', acquire, steps);
  expect(result.signal, result.stderr).toBe('SIGHUP');
  expect(result.stdout).toBe('');
  expect(lostEvent(result.stderr)).toMatchObject({ key: 'keeper-hup', reason: 'keeper-died', signal: 'SIGHUP' });
});

test('the keeper SIGKILLed with --on-lost ignore: a warning; release exits 76 once the lease ran out', async () => {
  const acquire = '"$D" acquire --redis "$R" --ttl 1s --on-lost ignore --log-format json ignored';
  const steps = 'sleep 2; echo "steps ran"; "$D" release --redis "$R" ignored || exit';
  const { result } = await killKeeperOf('dash', 'ignored', acquire, steps);
  expect(result.code, result.stderr).toBe(76);
  expect(result.stdout).toBe('steps ran\n');
  const warned = expect.stringMatching(/keeps running unprotected \(--on-lost ignore\)$/);
  expect(lostEvent(result.stderr)).toMatchObject({ key: 'ignored', reason: 'keeper-died', message: warned });
  expect(result.stderr).toMatch(/^dlock: ignored was no longer this owner's \(it expired or was taken\): the section/m);
});

test('each example of `acquire --help` stops on busy with 75 in dash, bash and zsh', async () => {
  const help = await runShell('dash', '"$D" acquire --help').result;
  const blocks = help.stdout.slice(help.stdout.indexOf('\nExamples:\n')).split('\n\n');
  const examples = blocks.filter((block) => block.includes('dlock acquire'));
  expect(examples).toHaveLength(2);
  // Run as written, against a held `deploy`; only a wait of 10 minutes is made shorter.
  const env = { DLOCK_REDIS_URL: server.url, DLOCK_WAIT: '300ms' };
  for (const example of examples) {
    const lines = example.split('\n').filter((line) => line.startsWith('  ') && !line.trimStart().startsWith('#'));
    const commands = lines.map((line) => line.trim().replaceAll('dlock ', '"$D" '));
    const script = commands.join('\n').replace('--wait 10m', '--wait 300ms');
    const runs = SHELLS.map((shell) => ({ shell, run: runShell(shell, script, [], env) }));
    for (const { shell, run } of runs) {
      const result = await run.result;
      expect(result.code, `${shell}: ${script}\n${result.stderr}`).toBe(75);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(/^(dlock: waiting for deploy \(.*\)\n)?dlock: deploy is busy .*\n$/);
    }
  }
});
