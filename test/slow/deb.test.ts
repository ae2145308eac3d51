// The Debian package (scripts/build-deb.mjs): built here from a freshly compiled x64 binary, its
// control file and file list read back with dpkg-deb, then installed with dpkg into an empty root
// (its own dpkg database, nothing on this machine changes) and the installed dlock found through
// PATH and run against a real redis-server. The real `apt-get install ./dist/dlock_*.deb`:
// docs/install.md, "The Debian package". Independent of DLOCK_BIN: it builds what it tests.

import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { execResult, type Result } from '../helpers/cli.js';
import { RedisServer } from '../../support/redis-server.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
const work = mkdtempSync(join(tmpdir(), 'dlock-deb-'));
const deb = join(work, `dlock_${version}_amd64.deb`);
const root = join(work, 'root');

function exec(file: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<Result> {
  return execResult(file, args, { cwd: work, env });
}

/** A SHA256SUMS beside the binaries as `npm run build:binaries` left it, before a rebuild of some. */
const STALE = '0'.repeat(64);
const OTHER = `${'1'.repeat(64)}  dlock-darwin-x64\n`;
const sumOf = (file: string): string => createHash('sha256').update(readFileSync(file)).digest('hex');

let redis: RedisServer;
beforeAll(async () => {
  const binary = join(work, 'dlock-linux-x64');
  writeFileSync(join(work, 'SHA256SUMS'), `${STALE}  dlock-linux-x64\n${OTHER}${STALE}  dlock-linux-arm64\n`);
  const built = await exec(process.execPath, [join(ROOT, 'scripts/build-binary.mjs'), '--out', binary]);
  if (built.code !== 0) throw new Error(`build-binary failed: ${built.stderr}`);
  const packed = await exec(process.execPath, [
    join(ROOT, 'scripts/build-deb.mjs'),
    '--arch',
    'amd64',
    '--binary',
    binary,
    '--out-dir',
    work,
  ]);
  if (packed.code !== 0) throw new Error(`build-deb failed: ${packed.stderr}`);
  redis = await RedisServer.start();
}, 180_000);
afterAll(async () => {
  await redis?.close();
  rmSync(work, { recursive: true, force: true });
});

// `npm run build:binaries`, then a rebuild of one binary (build:binary, build:deb, the bench, npm test).
test("build-binary rewrites its binary's line of the SHA256SUMS beside it, and keeps the others", async () => {
  const sums = readFileSync(join(work, 'SHA256SUMS'), 'utf8');
  expect(sums).toBe(`${sumOf(join(work, 'dlock-linux-x64'))}  dlock-linux-x64\n${OTHER}${STALE}  dlock-linux-arm64\n`);
  const check = await exec('sha256sum', ['-c', '--ignore-missing', 'SHA256SUMS']);
  expect(check.stdout).toBe('dlock-linux-x64: OK\n');
});

// build:deb's arm64 binary (`build-binary --target linux-arm64`): its sum goes to SHA256SUMS only.
test("another target's build leaves no .sha256 beside it (only linux-x64 has one), and updates SHA256SUMS", async () => {
  const arm64 = join(work, 'dlock-linux-arm64');
  const script = join(ROOT, 'scripts/build-binary.mjs');
  const built = await exec(process.execPath, [script, '--target', 'linux-arm64', '--out', arm64]);
  expect(built.code, built.stderr).toBe(0);
  expect(existsSync(`${arm64}.sha256`)).toBe(false);
  expect(readFileSync(join(work, 'SHA256SUMS'), 'utf8')).toBe(
    `${sumOf(join(work, 'dlock-linux-x64'))}  dlock-linux-x64\n${OTHER}${sumOf(arm64)}  dlock-linux-arm64\n`,
  );
}, 180_000);

test('its control file names the package, the version from package.json, the architecture and its only dependency', async () => {
  const info = await exec('dpkg-deb', ['--field', deb]);
  expect(info.code).toBe(0);
  const fields = Object.fromEntries(
    info.stdout
      .split('\n')
      .filter((line) => /^[A-Z][\w-]*: /.test(line))
      .map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 2)]),
  );
  expect(fields).toMatchObject({
    Package: 'dlock',
    Version: version,
    Architecture: 'amd64',
    Section: 'utils',
    Priority: 'optional',
    Depends: 'libc6 (>= 2.17)',
    Description: expect.stringMatching(/^flock\(1\) for distributed systems/),
  });
  expect(fields.Maintainer).toMatch(/^[^<>]+ <[^<>@\s]+@[^<>@\s]+>$/);
  expect(Number(fields['Installed-Size'])).toBeGreaterThan(50_000); // KiB: the Bun runtime is most of it
});

test('it holds the binary in /usr/bin, the man page and the completions in their system directories, all root-owned', async () => {
  const contents = await exec('dpkg-deb', ['--contents', deb]);
  expect(contents.code).toBe(0);
  const files = contents.stdout
    .trim()
    .split('\n')
    .map((line) => line.split(/\s+/))
    .filter(([mode]) => !mode.startsWith('d'))
    .map(([mode, owner, , , , path]) => `${mode} ${owner} ${path}`);
  expect(files.sort()).toEqual([
    '-rw-r--r-- root/root ./usr/share/bash-completion/completions/dlock',
    '-rw-r--r-- root/root ./usr/share/doc/dlock/changelog.gz',
    '-rw-r--r-- root/root ./usr/share/doc/dlock/copyright',
    '-rw-r--r-- root/root ./usr/share/fish/vendor_completions.d/dlock.fish',
    '-rw-r--r-- root/root ./usr/share/man/man1/dlock.1.gz',
    '-rw-r--r-- root/root ./usr/share/zsh/vendor-completions/_dlock',
    '-rwxr-xr-x root/root ./usr/bin/dlock',
  ]);
});

test('dpkg installs it into an empty root, and dlock is found on a cron-like PATH and takes a real lock', async () => {
  for (const dir of ['var/lib/dpkg/info', 'var/lib/dpkg/updates']) mkdirSync(join(root, dir), { recursive: true });
  writeFileSync(join(root, 'var/lib/dpkg/status'), '');
  // --force-depends: libc6 is this machine's, not registered in the empty root's database.
  const install = await exec('dpkg', ['--root', root, '--force-depends', '--force-not-root', '--install', deb]);
  expect(install.code, install.stderr).toBe(0);
  expect((await exec('dpkg', ['--root', root, '--status', 'dlock'])).stdout).toMatch(/^Status: install ok installed$/m);

  expect(gunzipSync(readFileSync(join(root, 'usr/share/man/man1/dlock.1.gz'))).toString()).toBe(
    readFileSync(join(ROOT, 'man/dlock.1'), 'utf8'),
  );
  for (const [installed, source] of [
    ['usr/share/bash-completion/completions/dlock', 'dlock.bash'],
    ['usr/share/zsh/vendor-completions/_dlock', 'dlock.zsh'],
    ['usr/share/fish/vendor_completions.d/dlock.fish', 'dlock.fish'],
  ])
    expect(readFileSync(join(root, installed), 'utf8')).toBe(readFileSync(join(ROOT, 'completions', source), 'utf8'));

  // As cron starts a job: a bare environment whose PATH is /usr/bin:/bin (the root's /usr/bin first).
  const cron = { PATH: `${root}/usr/bin:/usr/bin:/bin`, HOME: work, SHELL: '/bin/sh' };
  const script =
    'command -v dlock && dlock --version && dlock run --redis "$1" deb-lock -- sh -c \'echo "$DLOCK_FENCING_TOKEN"; exit 5\'';
  const result = await exec('/bin/sh', ['-c', script, 'sh', redis.url], cron);
  expect(result).toEqual({ code: 5, signal: null, stdout: `${root}/usr/bin/dlock\n${version}\n1\n`, stderr: '' });
});
