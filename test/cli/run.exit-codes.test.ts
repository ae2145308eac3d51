// `dlock run` exit codes (docs/reference/exit-codes.md), spawned as a user would against a real redis-server:
// the child's own status, 128+N for a signal, 64 for every kind of bad input, 69 when Redis
// cannot be reached, 75 / -E when busy, 126 / 127 when the command cannot run.
// (76, the lock lost while the child ran, is in run.lease.test.ts.)

import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { cleanEnv, DLOCK, dlock, start, type Running } from '../helpers/cli.js';
import { freePort, RedisServer } from '../../support/redis-server.mjs';
import { childPid, HOLD, onlyEvent, tempDir } from '../fixtures/observe.js';
import { useRedisServer } from '../helpers/server.js';
import { ConnectClock } from '../helpers/connect-clock.js';

let redis: RedisServer;
let dir: string;
useRedisServer((server) => {
  redis = server;
  dir = tempDir();
});

/** Every dlock error: exactly one stderr line starting "dlock: ", no stack trace. */
function expectOneErrorLine(stderr: string): void {
  expect(stderr).toMatch(/^dlock: [^\n]+\n$/);
  expect(stderr).not.toMatch(/\n\s+at /);
}

async function lockExists(key: string): Promise<boolean> {
  return (await redis.client().exists(`dlock:{${key}}`)) === 1;
}

describe("the child's status passes through", () => {
  test.concurrent.for([
    ['exit 0', 0],
    ['exit 7', 7],
    ['exit 1', 1],
    ['exit 255', 255],
    ['kill -KILL $$', 137],
    ['kill -TERM $$', 143],
    ['kill -INT $$', 130],
  ] as const)('sh -c %j -> %d, and the lock is released', async ([script, code], { expect }) => {
    const key = `status-${code}`;
    const result = await dlock(['run', '--redis', redis.url, key, '--', 'sh', '-c', script]);
    expect(result.code).toBe(code);
    expect(result.stderr).toBe('');
    expect(await lockExists(key)).toBe(false);
  });

  test('stdout and stderr of the child are its own (inherited)', async () => {
    const result = await dlock(['run', '--redis', redis.url, 'stdio', '--', 'sh', '-c', 'echo out; echo err >&2']);
    expect(result).toMatchObject({ code: 0, stdout: 'out\n', stderr: 'err\n' });
  });

  test('argv reaches the child as given, never through a shell', async () => {
    const result = await dlock([
      'run',
      '--redis',
      redis.url,
      'argv',
      '--',
      'printf',
      '%s|',
      'a b',
      '$HOME',
      '*',
      "'q'",
      '--',
      '-n',
    ]);
    expect(result).toMatchObject({ code: 0, stdout: "a b|$HOME|*|'q'|--|-n|" });
  });

  test('the child gets DLOCK_KEY, DLOCK_FENCING_TOKEN, DLOCK_TOKEN and DLOCK_TTL_MS', async () => {
    const result = await dlock(
      // 3s: the lease must outlast four process starts (sh, env, grep, sort) on a loaded machine.
      ['run', '--redis', redis.url, '-t', '3s', 'env/child', '--', 'sh', '-c', 'env | grep ^DLOCK_ | sort'],
      {
        env: cleanEnv({ DLOCK_TTL: '9s' }),
      },
    );
    expect(result.code).toBe(0);
    const env = Object.fromEntries(
      result.stdout
        .trim()
        .split('\n')
        .map((line) => line.split('=')),
    );
    expect(env).toEqual({
      DLOCK_KEY: 'env/child',
      DLOCK_FENCING_TOKEN: '1',
      DLOCK_TOKEN: expect.stringMatching(/^[0-9a-f]{32}$/),
      DLOCK_TTL_MS: '3000',
      DLOCK_TTL: '9s',
    });
  });
});

describe('64: bad input, reported before anything runs', () => {
  const marker = () => join(dir, 'usage-ran');
  // [what, arguments before "--" (the redis URL is added), the bad value the message must show]
  test.concurrent.for<[string, string[], string | undefined]>([
    ['bad duration', ['-t', 'soon', 'k'], 'soon'],
    ['bad --wait duration', ['-w', '5 minutes', 'k'], '5 minutes'],
    ['bad --kill-after', ['--kill-after', '1w', 'k'], '1w'],
    // Issue 31: it was capped at ttl/3 (10 s) without a word.
    ['--kill-after over ttl/3', ['--kill-after', '1m', 'k'], '1m'],
    ['--kill-after over a third of --ttl', ['-t', '3s', '--kill-after', '1001ms', 'k'], '1001ms'],
    ['bad --connect-timeout', ['--connect-timeout', 'fast', 'k'], 'fast'],
    ['ttl 0', ['-t', '0', 'k'], '0'],
    ['ttl 0ms', ['-t', '0ms', 'k'], '0ms'],
    ['negative ttl', ['--ttl=-5s', 'k'], '-5s'],
    ['ttl under 100ms', ['-t', '99ms', 'k'], '99ms'],
    ['key with a space', ['a b'], 'a b'],
    ['key with a tab', ['a\tb'], undefined],
    ['key with {', ['a{b'], 'a{b'],
    ['key with }', ['a}b'], 'a}b'],
    ['key too long', ['k'.repeat(257)], undefined],
    ['empty key', [''], undefined],
    ['bad URL scheme', ['--redis', 'http://127.0.0.1:6379', 'k'], 'http://127.0.0.1:6379'],
    ['URL that is no URL', ['--redis', 'localhost:6379', 'k'], 'localhost:6379'],
    ['URL with a bad port', ['--redis', 'redis://127.0.0.1:99999', 'k'], 'redis://127.0.0.1:99999'],
    ['unknown flag', ['--frobnicate', 'k'], '--frobnicate'],
    ['--wait with --no-wait', ['-w', '1s', '-n', 'k'], undefined],
    ['--no-wait with --wait', ['--no-wait', '--wait', '1s', 'k'], undefined],
    ['bad -E', ['-E', 'busy', 'k'], 'busy'],
    ['-E over 255', ['-E', '256', 'k'], '256'],
    ['bad --on-lost', ['--on-lost', 'panic', 'k'], 'panic'],
    ['bad --log-format', ['--log-format', 'xml', 'k'], 'xml'],
    ['-q with -v', ['-q', '-v', 'k'], undefined],
  ])('%s', async ([, args, shown], { expect }) => {
    const redisFirst = args.includes('--redis') ? [] : ['--redis', redis.url];
    const result = await dlock(['run', ...redisFirst, ...args, '--', 'touch', marker()]);
    expect(result.code).toBe(64);
    expectOneErrorLine(result.stderr);
    if (shown !== undefined) expect(result.stderr).toContain(shown);
    expect(result.stdout).toBe('');
    expect(existsSync(marker())).toBe(false);
  });

  test.concurrent.for([
    ['no command at all', ['k']],
    ['nothing after --', ['k', '--']],
    ['no key and no command', []],
  ])('missing command: %s', async ([, args], { expect }) => {
    const result = await dlock(['run', '--redis', redis.url, ...args]);
    expect(result.code).toBe(64);
    expectOneErrorLine(result.stderr);
  });

  test.concurrent.for<[string, Record<string, string>, string]>([
    ['bad DLOCK_TTL', { DLOCK_TTL: 'long' }, 'DLOCK_TTL'],
    ['bad DLOCK_WAIT', { DLOCK_WAIT: 'forever' }, 'DLOCK_WAIT'],
    ['bad DLOCK_REDIS_URL', { DLOCK_REDIS_URL: 'nope' }, 'DLOCK_REDIS_URL'],
    ['bad DLOCK_LOG_FORMAT', { DLOCK_LOG_FORMAT: 'xml' }, 'DLOCK_LOG_FORMAT'],
    ['bad DLOCK_PREFIX', { DLOCK_PREFIX: 'a b' }, 'DLOCK_PREFIX'],
  ])('%s names the variable', async ([, env, name], { expect }) => {
    const result = await dlock(['run', 'k', '--', 'touch', marker()], { env: cleanEnv(env) });
    expect(result.code).toBe(64);
    expectOneErrorLine(result.stderr);
    expect(result.stderr).toContain(name);
    expect(existsSync(marker())).toBe(false);
  });

  test('nothing was written to Redis by any of them', async () => {
    expect(await redis.client().keys('dlock:{k}*')).toEqual([]);
  });
});

describe('69: Redis unreachable, the child never runs', () => {
  test('nothing listening on the port', async () => {
    const port = await freePort();
    const marker = join(dir, 'refused-ran');
    const result = await dlock(['run', '--redis', `redis://127.0.0.1:${port}`, 'k', '--', 'touch', marker]);
    expect(result.code).toBe(69);
    expectOneErrorLine(result.stderr);
    expect(result.stderr).toContain(`127.0.0.1:${port}`);
    expect(result.stderr).toContain('connection refused');
    expect(existsSync(marker)).toBe(false);
  });

  test('a paused Redis: 69 within --connect-timeout (plus start-up), never a hang', async () => {
    const paused = await RedisServer.start();
    // Reached through a forwarder that notes when dlock connected, after its start-up.
    const clock = await ConnectClock.start(paused.port);
    const marker = join(dir, 'paused-ran');
    try {
      paused.pause();
      const started = Date.now();
      const result = await dlock([
        'run',
        '--redis',
        `redis://127.0.0.1:${clock.port}`,
        '--connect-timeout',
        '2s',
        'k',
        '--',
        'touch',
        marker,
      ]);
      const endedAt = Date.now();
      const sinceConnect = endedAt - clock.firstMs;
      console.log(
        `paused Redis, --connect-timeout 2s: dlock exited ${result.code} ${sinceConnect}ms after it connected ` +
          `(${endedAt - started}ms with its start-up)`,
      );
      expect(result.code).toBe(69);
      expectOneErrorLine(result.stderr);
      expect(result.stderr).toContain('timed out');
      expect(endedAt - started).toBeGreaterThanOrEqual(2000);
      // One bound, not two of them back to back (connect, then acquire, then release...), from
      // the connection on: dlock's start-up (up to ~1.5s on a loaded machine) is left out; the
      // slack is for a late timer and the exit on a busy machine.
      expect(sinceConnect).toBeLessThan(2000 + 1500);
      expect(existsSync(marker)).toBe(false);
    } finally {
      paused.resume();
      await clock.close();
      await paused.close();
    }
  });
});

describe('75: busy', () => {
  let holdDir: string;
  let holder: Running;
  beforeAll(async () => {
    holdDir = tempDir();
    // Not spawnDlock: the holder must outlive each test of this group.
    holder = start(['run', '--redis', redis.url, 'busy', '--', HOLD, holdDir]);
    await childPid(holdDir);
  });
  afterAll(async () => {
    writeFileSync(join(holdDir, 'stop'), '');
    expect((await holder.result).code).toBe(0);
  });

  test('--no-wait: 75 at once with one line naming the holder; the child never runs', async () => {
    const marker = join(dir, 'busy-ran');
    const result = await dlock(['run', '--redis', redis.url, '-n', 'busy', '--', 'touch', marker]);
    expect(result.code).toBe(75);
    expectOneErrorLine(result.stderr);
    expect(result.stderr).toMatch(/busy.*held by .* pid \d+/);
    expect(existsSync(marker)).toBe(false);
  });

  test('-E 0: skip quietly (exit 0, nothing printed, the child never runs)', async () => {
    const marker = join(dir, 'e0-ran');
    const result = await dlock(['run', '--redis', redis.url, '-n', '-E', '0', 'busy', '--', 'touch', marker]);
    expect(result).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(existsSync(marker)).toBe(false);
  });

  test('-E 3 picks the code', async () => {
    const result = await dlock([
      'run',
      '--redis',
      redis.url,
      '--no-wait',
      '--conflict-exit-code',
      '3',
      'busy',
      '--',
      'true',
    ]);
    expect(result.code).toBe(3);
  });

  test('--wait 400ms: 75 after about that long', async () => {
    const result = await dlock([
      'run',
      '--redis',
      redis.url,
      '--wait',
      '400ms',
      '--log-format',
      'json',
      'busy',
      '--',
      'true',
    ]);
    expect(result.code).toBe(75);
    const waiting = onlyEvent(result.stderr, 'waiting');
    expect(waiting.key).toBe('busy');
    // dlock's own measure of its wait, on the monotonic clock the deadline is checked on.
    const busy = onlyEvent(result.stderr, 'busy');
    expect(busy.waited_ms).toBeGreaterThanOrEqual(400);
    expect(busy.waited_ms).toBeLessThan(400 + 2000);
    // The same from the events' timestamps: the wait began waited_ms before the "waiting" event.
    // waited_ms is whole milliseconds, read just before that event is written, so this start
    // is known to within a millisecond. (A CI run measured 399.2 here when the event was
    // written after the command was made ready, a spawn's milliseconds after waited_ms.)
    const elapsed = busy.ts_ms - (waiting.ts_ms - waiting.waited_ms!);
    expect(elapsed).toBeGreaterThanOrEqual(400 - 1);
    expect(elapsed).toBeLessThan(400 + 2000);
  });

  test('DLOCK_WAIT works like --wait', async () => {
    const result = await dlock(['run', '--redis', redis.url, 'busy', '--', 'true'], {
      env: cleanEnv({ DLOCK_WAIT: '200ms' }),
    });
    expect(result.code).toBe(75);
  });
});

describe('126 / 127: the command cannot run; no lock is left behind', () => {
  test('127: no such command on PATH', async () => {
    const result = await dlock(['run', '--redis', redis.url, 'nf', '--', 'dlock-test-no-such-command', 'arg']);
    expect(result.code).toBe(127);
    expectOneErrorLine(result.stderr);
    expect(result.stderr).toContain('dlock-test-no-such-command');
    expect(await lockExists('nf')).toBe(false);
    // Not even taken and released: the fence counter was never touched.
    expect(await redis.client().exists('dlock:{nf}:fence')).toBe(0);
  });

  test('127: no such file', async () => {
    const result = await dlock(['run', '--redis', redis.url, 'nf2', '--', join(dir, 'missing', 'job.sh')]);
    expect(result.code).toBe(127);
    expectOneErrorLine(result.stderr);
    expect(await lockExists('nf2')).toBe(false);
  });

  test('126: a file without the execute bit', async () => {
    const script = join(dir, 'not-executable.sh');
    writeFileSync(script, '#!/bin/sh\nexit 0\n');
    chmodSync(script, 0o644);
    const result = await dlock(['run', '--redis', redis.url, 'ne', '--', script]);
    expect(result.code).toBe(126);
    expectOneErrorLine(result.stderr);
    expect(await lockExists('ne')).toBe(false);
  });

  test('126: a directory', async () => {
    const sub = join(dir, 'a-directory');
    mkdirSync(sub, { recursive: true });
    const result = await dlock(['run', '--redis', redis.url, 'nd', '--', sub]);
    expect(result.code).toBe(126);
    expectOneErrorLine(result.stderr);
    expect(await lockExists('nd')).toBe(false);
  });

  // A script whose #! interpreter cannot run fails like a missing command: before the lock.
  test.concurrent.for<[string, string, number, RegExp]>([
    [
      'missing interpreter',
      '#!/bin/dlock-test-nonexistent\necho ran\n',
      127,
      /^dlock: \S+: \/bin\/dlock-test-nonexistent: bad interpreter: no such file or directory\n$/,
    ],
    [
      'interpreter not executable',
      '#!DIR/plain-file\necho ran\n',
      126,
      /^dlock: \S+: \/\S+\/plain-file: bad interpreter: permission denied\n$/,
    ],
    ['interpreter is a directory', '#!/tmp\necho ran\n', 126, /: \/tmp: bad interpreter: permission denied\n$/],
    [
      'DOS line end after the interpreter',
      '#!/bin/sh\r\necho ran\n',
      127,
      /: \/bin\/sh\\x0d: bad interpreter: no such file or directory\n$/,
    ],
    [
      '#!/usr/bin/env with a command not on PATH',
      '#!/usr/bin/env dlock-test-no-such-interpreter\necho ran\n',
      127,
      /: \/usr\/bin\/env dlock-test-no-such-interpreter: bad interpreter: dlock-test-no-such-interpreter: command not found\n$/,
    ],
    [
      '#!/usr/bin/env -S with a command not on PATH',
      '#!/usr/bin/env -S A=1 dlock-test-no-such-interpreter -x\necho ran\n',
      127,
      /bad interpreter: dlock-test-no-such-interpreter: command not found\n$/,
    ],
  ])('%s: %#', async ([what, text, code, message], { expect }) => {
    const key = `interp-${what.replace(/\W+/g, '-')}`;
    const script = join(dir, `${key}.sh`);
    writeFileSync(join(dir, 'plain-file'), 'not a program\n', { mode: 0o644 });
    writeFileSync(script, text.replace('DIR', dir), { mode: 0o755 });
    const result = await dlock(['run', '--redis', redis.url, key, '--', script]);
    expect(result.code).toBe(code);
    expectOneErrorLine(result.stderr);
    expect(result.stderr).toMatch(message);
    expect(result.stdout).toBe('');
    expect(await lockExists(key)).toBe(false);
    expect(await redis.client().exists(`dlock:{${key}}:fence`)).toBe(0);
  });

  test.concurrent.for([
    ['#!/usr/bin/env sh, found on PATH', '#!/usr/bin/env sh\necho ran\n'],
    ['no #! line: run by /bin/sh, as execvp and bash do', 'echo ran\n'],
  ])('runs: %s', async ([what, text], { expect }) => {
    // Each case its own key: the two run at once, and one waiting for the other prints a status line.
    const key = `runs-${what.replace(/\W+/g, '-')}`;
    const script = join(dir, `${key}.sh`);
    writeFileSync(script, text, { mode: 0o755 });
    expect(await dlock(['run', '--redis', redis.url, key, '--', script])).toMatchObject({
      code: 0,
      stdout: 'ran\n',
      stderr: '',
    });
  });

  test('the lock stays free for the next run', async () => {
    await dlock(['run', '--redis', redis.url, 'nf3', '--', 'dlock-test-no-such-command']);
    const result = await dlock(['run', '--redis', redis.url, '-n', 'nf3', '--', 'true']);
    expect(result.code).toBe(0);
  });
});

// A caller that ignores SIGCHLD (bash's `trap '' CHLD`; dash keeps its own) passes that on across
// exec, and the kernel then reaps dlock's children itself: the binary's wait failed (ECHILD, 70).
// coreutils' timeout tests the same ("immune to parent's SIGCHLD handler").
test("a caller that ignores SIGCHLD: the command's status and --max-hold's 124 still come through", () => {
  const ignoring = (...args: string[]) =>
    spawnSync('bash', ['-c', `trap '' CHLD; exec "$0" "$@"`, DLOCK, 'run', '--redis', redis.url, ...args], {
      env: cleanEnv(),
      encoding: 'utf8',
      timeout: 30_000,
    });
  const status = ignoring('ignored-chld', '--', 'sh', '-c', 'exit 3');
  expect(status.status, status.stderr).toBe(3);
  expect(status.stderr).toBe('');
  const bounded = ignoring('--max-hold', '1s', 'ignored-chld', '--', 'sleep', '30');
  expect(bounded.status, bounded.stderr).toBe(124);
});
