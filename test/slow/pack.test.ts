// The npm package as users get it: `npm pack`, then a global install of the tarball into a
// temporary prefix (offline), then the installed `dlock` against a real redis-server.
// npm-only by nature: it tests what `npm pack` ships (the Node bundle and its code cache), so
// under `npm run test:binary` (DLOCK_BIN) it still tests the npm package, not the binary; the
// binary's counterpart, built and run as users get it, is test/slow/binary.test.ts.

import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { execResult, type Result } from '../helpers/cli.js';
import { RedisServer } from '../../support/redis-server.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
const work = mkdtempSync(join(tmpdir(), 'dlock-pack-'));
const prefix = join(work, 'prefix');
const installed = join(prefix, 'bin', 'dlock');
// The installed dlock finds node on PATH like any user's shell would; nothing from this repo.
const USER_ENV = { PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, HOME: work };

function exec(file: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Result> {
  return execResult(file, args, {
    cwd: options.cwd ?? work,
    env: options.env ?? USER_ENV,
    maxBuffer: 64 * 1024 * 1024,
  });
}

/** npm with the caller's environment (its cache), never the network. */
async function npm(args: string[]): Promise<string> {
  const result = await exec('npm', [...args, '--offline', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: ROOT,
    env: process.env,
  });
  if (result.code !== 0) throw new Error(`npm ${args.join(' ')} failed: ${result.stderr}`);
  return result.stdout;
}

let redis: RedisServer;
let files: string[];
beforeAll(async () => {
  // --ignore-scripts: use dist/ as `npm test` built it rather than rebuild it under running tests.
  const [packed] = JSON.parse(await npm(['pack', '--json', '--ignore-scripts', '--pack-destination', work])) as [
    { filename: string; files: { path: string }[] },
  ];
  files = packed.files.map((file) => file.path).sort();
  const started = performance.now();
  await npm(['install', '--global', '--prefix', prefix, '--ignore-scripts', join(work, packed.filename)]);
  console.log(`npm install -g of the tarball took ${Math.round(performance.now() - started)}ms`);
  redis = await RedisServer.start();
}, 120_000);
afterAll(async () => {
  await redis?.close();
  rmSync(work, { recursive: true, force: true });
});

/** The repository's docs/ pages: the README links into them, so the package ships them all. */
function docsPages(dir = 'docs'): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true })
    .flatMap((entry) => (entry.isDirectory() ? docsPages(join(dir, entry.name)) : [join(dir, entry.name)]))
    .sort();
}

test('the package holds only what users need, and every docs page the README links into', () => {
  expect(files.filter((file) => file.startsWith('docs/'))).toEqual(docsPages());
  expect(files.filter((file) => !file.startsWith('docs/'))).toEqual([
    'CHANGELOG.md',
    'LICENSE',
    'README.md',
    'bin/dlock',
    'bin/package.json',
    'completions/dlock.bash',
    'completions/dlock.fish',
    'completions/dlock.zsh',
    'dist/dlock.cjs',
    'dist/dlock.cjs.cache',
    'man/dlock.1',
    'package.json',
  ]);
});

test('the installed dlock prints its version, from any directory, without warnings', async () => {
  expect(await exec(installed, ['--version'], { cwd: tmpdir() })).toEqual({
    code: 0,
    signal: null,
    stdout: `${version}\n`,
    stderr: '',
  });
});

test('the installed dlock runs a real lock', async () => {
  const result = await exec(installed, [
    'run',
    '--redis',
    redis.url,
    'packed',
    '--',
    'sh',
    '-c',
    'echo "fence $DLOCK_FENCING_TOKEN"; exit 3',
  ]);
  expect(result).toEqual({ code: 3, signal: null, stdout: 'fence 1\n', stderr: '' });
  expect(await redis.client().exists('dlock:{packed}')).toBe(0);
});

test('the installed dlock (a symlink to the sh prologue of bin/dlock) passes descriptor 3 to the command', async () => {
  const script = `"$0" run --redis ${redis.url} packed-fd -- sh -c 'echo x >&3' 3>&1`;
  expect(await exec('/bin/sh', ['-c', script, installed])).toEqual({
    code: 0,
    signal: null,
    stdout: 'x\n',
    stderr: '',
  });
});

test('the installed package brings its completions and man page', async () => {
  const packageDir = join(prefix, 'lib', 'node_modules', 'dlock-cli');
  for (const shell of ['bash', 'zsh', 'fish']) {
    const script = readFileSync(join(packageDir, 'completions', `dlock.${shell}`), 'utf8');
    expect((await exec(installed, ['completion', shell])).stdout).toBe(script);
  }
  expect(existsSync(join(prefix, 'share', 'man', 'man1', 'dlock.1'))).toBe(true);
});

test('the runtime dependencies are bundled: dist/dlock.cjs needs no node_modules', async () => {
  const bundle = join(prefix, 'lib', 'node_modules', 'dlock-cli', 'dist', 'dlock.cjs');
  const isolated = mkdtempSync(join(work, 'isolated-'));
  const copy = join(isolated, 'dlock.cjs');
  await exec('cp', [bundle, copy]);
  expect(readdirSync(isolated)).toEqual(['dlock.cjs']);
  expect(await exec(process.execPath, [copy, 'status', '--redis', redis.url, 'packed'])).toMatchObject({
    code: 1,
    stderr: '',
  });
});

test('man/dlock.1 is up to date with --help (`npm run build:man` regenerates it)', async () => {
  const result = await exec(process.execPath, [join(ROOT, 'scripts/build-man.mjs'), '--check'], { env: process.env });
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
});
