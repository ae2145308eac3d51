// The Bun runtime each standalone target is built on (scripts/build-binary.mjs --target,
// scripts/build-binaries.mjs). Bun publishes one npm package per platform (@oven/bun-linux-aarch64,
// …); `npm ci` installs only this host's, so the others are fetched once with `npm pack` (the npm
// registry and npm's own configuration: proxies, mirrors, its cache) into a cache directory, each
// checked against the sha512 pinned below, then its bin/bun is unpacked beside it.

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * dlock's name for each target (dist/dlock-<name>), Bun's --target and the npm package of its runtime.
 * `runs` says whether this machine (Linux x64, glibc) can run it natively.
 */
export const TARGETS = {
  'linux-x64': { bun: 'bun-linux-x64', pkg: '@oven/bun-linux-x64', runs: true },
  'linux-x64-baseline': { bun: 'bun-linux-x64-baseline', pkg: '@oven/bun-linux-x64-baseline', runs: true },
  'linux-arm64': { bun: 'bun-linux-arm64', pkg: '@oven/bun-linux-aarch64', runs: false },
  'linux-x64-musl': { bun: 'bun-linux-x64-musl', pkg: '@oven/bun-linux-x64-musl', runs: false },
  'linux-arm64-musl': { bun: 'bun-linux-arm64-musl', pkg: '@oven/bun-linux-aarch64-musl', runs: false },
  'darwin-arm64': { bun: 'bun-darwin-arm64', pkg: '@oven/bun-darwin-aarch64', runs: false },
  'darwin-x64': { bun: 'bun-darwin-x64', pkg: '@oven/bun-darwin-x64', runs: false },
};

/**
 * The sha512 of each runtime package's tarball at the pinned `bun` (`npm view <pkg>@<version>
 * dist.integrity`). package-lock.json has most of them too (not the baseline one: `bun` does not
 * depend on it) and must agree; a new `bun` version fails the build until this list is updated.
 */
const PINNED = {
  version: '1.4.5',
  '@oven/bun-linux-x64':
    'sha512-IWX9BELoGHAUtMonkeSaNaZwXzRk+oDw6Mk+HBFXd3KHYIBNBsIGRupMZPcgNoDbJpLu6gAJjIoIVPZtt1aJ1g==',
  '@oven/bun-linux-x64-baseline':
    'sha512-s8yMwYcFnnrA178gji0gZbkE2WVDej/Ti1x770oPfihxyRxSMNhGhiAQNXV53aDeraZxksdvKV/RAdQBCd0qPA==',
  '@oven/bun-linux-aarch64':
    'sha512-4BXmsSKnjOrlGWqZV4x/oWa7AVoR+B6lCXddMzOAXBIm3t50eslg9wb66gmtW1AamEQ1l1CDvmmruysEhqOWMg==',
  '@oven/bun-linux-x64-musl':
    'sha512-10QoW/YfTgnURaGEaHpJCiXjLI2e5iTtfVDaA5JKcyUzaa1cq6cVUY9/Uq5XkYzvtRjHLRe9Oj/lTDIQcxy8HQ==',
  '@oven/bun-linux-aarch64-musl':
    'sha512-XCNc+WvvMAdNNb+OWTogpy+N9wm62fkVeEVLb6how0RZhW5LPi6c7BlkeVCuWps7XjEl2saFpHFa20/1E+PAHg==',
  '@oven/bun-darwin-aarch64':
    'sha512-4MIFXHmctH2EhAxLXm2/qxNtv17dFtLJylvaOCsrgq6KSqHTs6eW5YSrJjRbJxYUJaR901fsN8JfZOa+CsWpWQ==',
  '@oven/bun-darwin-x64':
    'sha512-qkLPMGHZM9NI6CeHTWwVezzmlo6cC4Ta7yUAjYIWXS366qQcOlcp75t2uZyiuVRBMPS0h9qE0tCcvCHGaFqjJg==',
};

/** Where fetched runtimes are kept: $DLOCK_BUN_RUNTIMES, else $XDG_CACHE_HOME/dlock-build, else ~/.cache/dlock-build. */
export function cacheDir() {
  if (process.env.DLOCK_BUN_RUNTIMES) return process.env.DLOCK_BUN_RUNTIMES;
  return join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'dlock-build');
}

/** The version (that of the `bun` devDependency) and sha512 integrity pinned for a runtime package. */
export function pinned(pkg) {
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'));
  const version = lock.packages['node_modules/bun']?.version;
  if (version !== PINNED.version) {
    throw new Error(
      `scripts/bun-runtimes.mjs pins the runtimes of bun ${PINNED.version}, package-lock.json has ${version}`,
    );
  }
  const entry = lock.packages[`node_modules/${pkg}`];
  if (entry && (entry.version !== version || entry.integrity !== PINNED[pkg])) {
    throw new Error(`package-lock.json has ${pkg}@${entry.version} ${entry.integrity}, not ${PINNED[pkg]}`);
  }
  return { version, integrity: PINNED[pkg] };
}

function integrityOf(file) {
  return `sha512-${createHash('sha512').update(readFileSync(file)).digest('base64')}`;
}

/**
 * The path of the Bun executable for a target's runtime package, fetched and checked if it is not in
 * the cache yet. Throws with a one-line reason (no registry, a checksum mismatch).
 */
export function runtimePath(target) {
  const { pkg } = TARGETS[target];
  const { version, integrity } = pinned(pkg);
  const name = `${pkg.slice(1).replace('/', '-')}-${version}`; // oven-bun-linux-aarch64-1.4.5
  const dir = join(cacheDir(), name);
  const bun = join(dir, 'bun');
  const tarball = join(cacheDir(), `${name}.tgz`);
  if (existsSync(bun) && existsSync(tarball) && integrityOf(tarball) === integrity) return bun;

  mkdirSync(cacheDir(), { recursive: true });
  const work = mkdtempSync(join(cacheDir(), '.fetch-'));
  try {
    const fetched = join(work, `${name}.tgz`);
    if (!existsSync(tarball) || integrityOf(tarball) !== integrity) {
      try {
        execFileSync('npm', ['pack', `${pkg}@${version}`, '--pack-destination', work, '--loglevel=error'], {
          stdio: ['ignore', 'ignore', 'pipe'],
          cwd: work,
        });
      } catch (error) {
        const why = error.stderr?.toString().trim().split('\n').join(' ') || error.message;
        throw new Error(`npm pack ${pkg}@${version} failed: ${why}`);
      }
      const got = integrityOf(fetched);
      if (got !== integrity) {
        throw new Error(`${pkg}@${version} from the registry is ${got}, scripts/bun-runtimes.mjs pins ${integrity}`);
      }
      renameSync(fetched, tarball);
    }
    execFileSync('tar', ['-xzf', tarball, '-C', work, 'package/bin/bun']);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir);
    renameSync(join(work, 'package/bin/bun'), bun);
    return bun;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * This host's Bun executable from node_modules (the devDependency `bun`), or undefined when npm ci
 * did not bring it. npm places it at @oven/bun-linux-x64/bin/bun; when the `bun` package's install
 * script is allowed to run, it moves that file to bun/bin/bun.exe. Used by scripts/build-binary.mjs
 * and the bench's floors (bench/lib/floors.mjs).
 */
export function hostBun() {
  const require = createRequire(import.meta.url);
  for (const [pkg, file] of [
    ['@oven/bun-linux-x64', 'bin/bun'],
    ['bun', 'bin/bun.exe'],
  ]) {
    try {
      const candidate = join(dirname(require.resolve(`${pkg}/package.json`)), file);
      if (isElf(candidate)) return candidate;
    } catch {
      // not installed
    }
  }
  return undefined;
}

function isElf(file) {
  try {
    const fd = openSync(file, 'r');
    const magic = Buffer.alloc(4);
    try {
      readSync(fd, magic, 0, 4, 0);
    } finally {
      closeSync(fd);
    }
    return magic.equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46]));
  } catch {
    return false;
  }
}
