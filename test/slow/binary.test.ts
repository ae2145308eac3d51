// The standalone executable (compiled with Bun, scripts/build-binary.mjs): built once here (or, in
// the binary pass, DLOCK_BIN's, the one CI built, copied here with its checksum file), then run with
// an empty environment from another directory, as on a host without Node. The CLI tests that run
// against it as well: `npm run test:binary` (test/binary-pass.ts; CI does, .ci/run), all of them:
// `npm run test:binary:all`.

import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Result } from '../helpers/cli.js';
import { freePort, RedisServer } from '../../support/redis-server.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
const work = mkdtempSync(join(tmpdir(), 'dlock-binary-'));
const binary = join(work, 'dlock-linux-x64');
// No Node, no node_modules, no PATH entry for either: only what /bin/sh children need.
const BARE_ENV = { PATH: '/usr/bin:/bin' };

let redis: RedisServer;
beforeAll(async () => {
  const built = process.env.DLOCK_BIN;
  if (built !== undefined) {
    copyFileSync(built, binary);
    copyFileSync(`${built}.sha256`, `${binary}.sha256`);
    redis = await RedisServer.start();
    return;
  }
  const started = performance.now();
  const build = await exec(process.execPath, [join(ROOT, 'scripts/build-binary.mjs'), '--out', binary], {
    env: process.env,
  });
  if (build.code !== 0) throw new Error(`build-binary failed: ${build.stderr}`);
  console.log(`built ${binary} in ${((performance.now() - started) / 1000).toFixed(1)}s`);
  redis = await RedisServer.start();
}, 120_000);
afterAll(async () => {
  await redis?.close();
  rmSync(work, { recursive: true, force: true });
});

function exec(file: string, args: string[], options: { env?: NodeJS.ProcessEnv } = {}): Promise<Result> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd: tmpdir(), env: options.env ?? BARE_ENV, encoding: 'utf8' }, (error, stdout, stderr) => {
      const failure = error as (Error & { code?: number | string; signal?: NodeJS.Signals }) | null;
      resolve({
        code: typeof failure?.code === 'number' ? failure.code : 0,
        signal: failure?.signal ?? null,
        stdout,
        stderr,
      });
    });
  });
}
const standalone = (args: string[], env?: NodeJS.ProcessEnv) => exec(binary, args, { env });

test('comes with its checksum file, checked as the README install recipe does', async () => {
  const check = await new Promise<Result>((resolve) => {
    execFile('sha256sum', ['-c', 'dlock-linux-x64.sha256'], { cwd: work, encoding: 'utf8' }, (error, stdout, stderr) =>
      resolve({ code: error ? 1 : 0, signal: null, stdout, stderr }),
    );
  });
  expect(check).toMatchObject({ code: 0, stdout: 'dlock-linux-x64: OK\n' });
});

test('starts with an empty environment and prints the version, no warnings', async () => {
  expect(await standalone(['--version'], {})).toEqual({ code: 0, signal: null, stdout: `${version}\n`, stderr: '' });
});

test('runs a real lock: exit code passes through, the child gets its fencing token', async () => {
  const result = await standalone([
    'run',
    '--redis',
    redis.url,
    'binary-lock',
    '--',
    'sh',
    '-c',
    'echo "$DLOCK_KEY $DLOCK_FENCING_TOKEN"; exit 7',
  ]);
  expect(result).toEqual({ code: 7, signal: null, stdout: 'binary-lock 1\n', stderr: '' });
  expect(await redis.client().exists('dlock:{binary-lock}')).toBe(0);
});

test('status, run and the JSON log load their lazily imported modules', async () => {
  // The child asks who holds the lock it runs under: held, so status exits 0 and dlock passes it on.
  const result = await standalone([
    'run',
    '-v',
    '--log-format',
    'json',
    '--redis',
    redis.url,
    'binary-status',
    '--',
    binary,
    'status',
    '--json',
    '--redis',
    redis.url,
    'binary-status',
  ]);
  expect(result.code).toBe(0);
  expect(JSON.parse(result.stdout)).toMatchObject({ key: 'binary-status', held: true });
  const events = result.stderr
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { event: string });
  expect(events.map((e) => e.event)).toEqual(['acquired', 'released']);
  expect(await standalone(['status', '--redis', redis.url, 'binary-status'])).toMatchObject({ code: 1, stderr: '' });
});

test('reads no .env or bunfig.toml from the directory it starts in (dlock is configured by flags and DLOCK_* only)', async () => {
  const dir = mkdtempSync(join(work, 'cwd-'));
  writeFileSync(join(dir, '.env'), 'DLOCK_TEST_FROM_DOTENV=leaked\nDLOCK_REDIS_URL=redis://127.0.0.1:1\n');
  writeFileSync(join(dir, 'bunfig.toml'), 'preload = ["./nope.js"]\n');
  const result = await new Promise<Result>((resolve) => {
    execFile(
      binary,
      ['run', '--redis', redis.url, 'binary-dotenv', '--', 'sh', '-c', 'echo "${DLOCK_TEST_FROM_DOTENV-unset}"'],
      { cwd: dir, env: BARE_ENV, encoding: 'utf8' },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, signal: null, stdout, stderr });
      },
    );
  });
  expect(result).toEqual({ code: 0, signal: null, stdout: 'unset\n', stderr: '' });
});

test('prints the embedded completion scripts', async () => {
  for (const shell of ['bash', 'zsh', 'fish']) {
    const result = await standalone(['completion', shell]);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toBe(readFileSync(join(ROOT, 'completions', `dlock.${shell}`), 'utf8'));
  }
});

test('a usage error exits 64 with one dlock: line', async () => {
  const result = await standalone(['run', '--ttl', 'soon', 'k', '--', 'true']);
  expect(result.code).toBe(64);
  expect(result.stderr).toMatch(/^dlock: [^\n]*--ttl[^\n]*soon[^\n]*\n$/);
});

test('nothing listening exits 69 with one dlock: line', async () => {
  const url = `redis://127.0.0.1:${await freePort()}`;
  const result = await standalone(['run', '--connect-timeout', '2s', '--redis', url, 'k', '--', 'true']);
  expect(result.code).toBe(69);
  expect(result.stderr).toMatch(/^dlock: [^\n]*127\.0\.0\.1[^\n]*\n$/);
});

test('a missing command exits 127, as from bin/dlock', async () => {
  const result = await standalone(['run', '--redis', redis.url, 'binary-127', '--', 'no-such-command-dlock']);
  expect(result).toMatchObject({ code: 127, stdout: '' });
  expect(result.stderr).toMatch(/^dlock: no-such-command-dlock: command not found\n$/);
});

test.each([
  [['--help']],
  [['help', 'run']],
  [['status', '--help']],
  [['run', '--on-lost', 'later', 'k', '--', 'true']],
  [['frobnicate']],
  [[]],
])('prints the same as bin/dlock: %j', async (args) => {
  const bundled = await exec(join(ROOT, 'bin/dlock'), args, { env: process.env });
  expect(await standalone(args)).toEqual(bundled);
});
