// While dlock waits for a lock it makes the command ready (src/child/launcher.ts): a shell
// blocked on a pipe that execs the command when the lock is granted. Nothing of that may show:
// the command gets the same arguments, environment and descriptors as one started without a
// wait, it does not run (nor show in `ps` under its own words) before the grant, and a wait
// that ends without the lock leaves no process behind. Both builds (test:binary runs this too).

import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { cleanEnv, DLOCK, type Result } from '../helpers/cli.js';
import { hold, spawnDlock, tempDir, waitForDeath } from '../fixtures/observe.js';
import { RedisServer } from '../../support/redis-server.mjs';
import { waitUntil } from '../../support/wait-until.mjs';
import { useRedisServer } from '../helpers/server.js';

let redis: RedisServer;
useRedisServer((server) => (redis = server));

/** Run `script` with /bin/sh in `cwd`; "$DL" is dlock, "$URL" the test's Redis. */
function sh(script: string, cwd: string, extra: Record<string, string> = {}): Promise<Result> {
  const env = cleanEnv({ DL: DLOCK, URL: redis.url, ...extra });
  return new Promise((resolve) => {
    execFile('/bin/sh', ['-c', script], { cwd, env, encoding: 'utf8' }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      resolve({ code, signal: (error?.signal as NodeJS.Signals | undefined) ?? null, stdout, stderr });
    });
  });
}

/** How many waiters Redis shows in `key`'s line. */
async function inLine(key: string): Promise<number> {
  return redis.client().zcard(`dlock:{${key}}:line`);
}

/** Ready commands (not zombies) whose environment has `marker`: what a wait may have left behind. */
function readyWith(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const environ = readFileSync(`/proc/${entry}/environ`, 'latin1');
      if (environ.includes(marker) && environ.includes('DLOCK_LAUNCH_ARGC=')) pids.push(Number(entry));
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return pids;
}

// What the command sees: its arguments, its environment (bar the lock's token and fence, which
// differ per run), its working directory and PWD, and its open descriptors (listed by the
// command itself, the exec'd `sh` of `sh -c`, without opening any).
const SHOW = `printf '<%s>\\n' "$0" "$@"; env | grep -v '^DLOCK_TOKEN=\\|^DLOCK_FENCING_TOKEN=\\|^_=' | sort; pwd; for n in $(seq 0 12); do [ -e /proc/self/fd/$n ] && printf "%s " $n; done; echo`;
const WORDS = `'one two' '' 'a'"'"'quote' 'dollar $HOME' "$(printf 'new\\nline')" '*'`;

describe('a command made ready while waiting runs exactly as one started at once', () => {
  test('arguments, environment (odd values), descriptors 3 and 5, working directory', async () => {
    const cwd = tempDir();
    const key = 'ready-same';
    const run = `"$DL" run --redis "$URL" --wait 20s ${key} -- sh -c '${SHOW.replace(/'/g, `'"'"'`)}' ${WORDS} 3>three 5>&1 4>&- 6>&- 7>&- 8>&- 9>&-`;
    const marker = `${process.pid}-ready-same-${Date.now()}`;
    const env = { ODD: 'x  y\'"z', EMPTY: '', DLOCK_TEST_MARKER: marker };
    const direct = await sh(run, cwd, env);
    expect(direct.code, direct.stderr).toBe(0);

    const holder = hold(key, { redis: redis.url });
    await holder.child();
    const waiting = sh(run, cwd, env);
    await waitUntil('the run waiting in line', async () => (await inLine(key)) === 1);
    // The run that waits has its command ready (the comparison is worth something only then).
    await waitUntil('the ready command', async () => readyWith(marker).length === 1);
    holder.stop();
    const waited = await waiting;
    expect(waited.code, waited.stderr).toBe(0);
    expect(waited.stdout).toBe(direct.stdout);
    expect(waited.stdout).toContain('<one two>\n<>\n');
    expect(waited.stdout).toContain(`\nODD=x  y'"z\n`);
    expect(waited.stdout).toMatch(/\n0 1 2 3 5 \n$/);
    expect(waited.stdout).not.toContain('DLOCK_LAUNCH');
  });

  test('variables a shell sets itself (PPID, OPTIND) reach a waiter’s command as they reach one started at once', async () => {
    const key = 'ready-shell-vars';
    // `env` itself, not a shell, prints them: a shell as the command would set its own. (The npm
    // build starts through bin/dlock's sh part, which sets them as any shell does; the binary
    // passes the caller's on. Either way a waiter's command must see what a direct one sees.)
    const run = () =>
      spawnDlock(['run', '--redis', redis.url, '--wait', '20s', key, '--', 'env'], {
        env: cleanEnv({ PPID: '77', OPTIND: '5' }),
      });
    const shellVars = (stdout: string) =>
      stdout
        .split('\n')
        .filter((line) => /^(PPID|OPTIND)=/.test(line))
        .sort();
    const direct = await run().result;
    expect(direct.code, direct.stderr).toBe(0);
    expect(shellVars(direct.stdout)).toHaveLength(2);

    const holder = hold(key, { redis: redis.url });
    await holder.child();
    const waiter = run();
    await waitUntil('the waiter in line', async () => (await inLine(key)) === 1);
    holder.stop();
    const waited = await waiter.result;
    expect(waited.code, waited.stderr).toBe(0);
    expect(shellVars(waited.stdout)).toEqual(shellVars(direct.stdout));
  });

  test('the fencing token and DLOCK_SLOT are the grant’s', async () => {
    const key = 'ready-slot';
    const first = hold(key, { redis: redis.url, flags: ['--slots', '1'] });
    const firstChild = await first.child();
    const dir = tempDir();
    const waiter = hold(key, { redis: redis.url, flags: ['--slots', '1', '--wait', '20s'], dir });
    await waitUntil('the waiter in line', async () => (await inLine(key)) === 1);
    first.stop();
    const { env } = await waiter.child();
    expect(env.DLOCK_SLOT).toBe('0');
    expect(BigInt(env.DLOCK_FENCING_TOKEN)).toBe(BigInt(firstChild.env.DLOCK_FENCING_TOKEN) + 1n);
    waiter.stop();
    expect((await waiter.result).code).toBe(0);
  });
});

describe('nothing of the command runs or stays before the grant', () => {
  test('while waiting the command has not run, and its words are in no process’s command line', async () => {
    const key = 'ready-hidden';
    const marker = `marker-${process.pid}-${Date.now()}`;
    const holder = hold(key, { redis: redis.url });
    await holder.child();
    const dir = tempDir();
    const waiter = spawnDlock([
      'run',
      '--redis',
      redis.url,
      '--wait',
      '20s',
      key,
      '--',
      'sh',
      '-c',
      `touch ${join(dir, 'ran')}`,
      marker,
    ]);
    await waitUntil('the waiter in line', async () => (await inLine(key)) === 1);
    // Only dlock's own command line has the command's words: not the ready command's.
    const listed = await new Promise<string>((resolve) =>
      execFile('ps', ['-eo', 'pid=,args='], (_, stdout) => resolve(stdout)),
    );
    const showing = listed
      .split('\n')
      .filter((line) => line.includes(marker))
      .map((line) => Number(line.trim().split(' ')[0]));
    expect(showing).toEqual([waiter.process.pid]);
    expect(existsSync(join(dir, 'ran'))).toBe(false);
    holder.stop();
    expect((await waiter.result).code).toBe(0);
    expect(existsSync(join(dir, 'ran'))).toBe(true);
  });

  test.each([
    ['the wait runs out (75)', ['--wait', '400ms'], undefined, 75],
    ['SIGTERM while waiting (143)', ['--wait', '20s'], 'SIGTERM', 143],
    ['SIGKILL while waiting', ['--wait', '20s'], 'SIGKILL', null],
  ] as const)('%s: the command never runs and no process is left', async (_, flags, signal, code) => {
    const key = `ready-gone-${signal ?? 'wait'}`;
    const marker = `DLOCK_TEST_MARKER=${process.pid}-${key}-${Date.now()}`;
    const holder = hold(key, { redis: redis.url });
    await holder.child();
    const dir = tempDir();
    const waiter = spawnDlock(
      ['run', '--redis', redis.url, ...flags, key, '--', 'sh', '-c', `touch ${join(dir, 'ran')}`],
      {
        env: cleanEnv({ DLOCK_TEST_MARKER: marker.split('=')[1] }),
      },
    );
    await waitUntil('the waiter in line', async () => (await inLine(key)) === 1);
    // The ready command is there while it waits (else this test would prove nothing)...
    await waitUntil('the ready command', async () => readyWith(marker).length === 1);
    const [ready] = readyWith(marker);
    if (signal) waiter.process.kill(signal);
    const result = await waiter.result;
    expect(result.code).toBe(code);
    // ...and gone with the wait (a SIGKILLed dlock's by the parent-death signal).
    await waitForDeath(ready, 5_000);
    expect(readyWith(marker)).toEqual([]);
    holder.stop();
    expect((await holder.result).code).toBe(0);
    expect(existsSync(join(dir, 'ran'))).toBe(false);
  });
});
