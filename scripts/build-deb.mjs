// Build dist/dlock_<version>_<arch>.deb (amd64 from dist/dlock-linux-x64, arm64 from
// dist/dlock-linux-arm64: `npm run build:deb` builds both binaries first) with dpkg-deb: the binary
// in /usr/bin/dlock (cron's default PATH is /usr/bin:/bin), the man page, the bash, zsh and fish
// completions where each shell looks for a package's, and the license. No maintainer scripts.
// Install: `apt-get install ./dist/dlock_<version>_amd64.deb` (docs/install.md, "The Debian package").
//
//   node scripts/build-deb.mjs [--arch amd64|arm64]… [--binary <file> (with one --arch)] [--out-dir <dir>]
//
// Maintainer: $DEBFULLNAME <$DEBEMAIL> when set (as dch and dh_make read them), else the project's.

import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';

process.umask(0o022); // the package's directories 0755, whatever the caller's umask
const root = fileURLToPath(new URL('..', import.meta.url));
const { values } = parseArgs({
  options: {
    arch: { type: 'string', multiple: true },
    binary: { type: 'string' },
    'out-dir': { type: 'string' },
  },
});
const BINARIES = { amd64: 'dist/dlock-linux-x64', arm64: 'dist/dlock-linux-arm64' };
const arches = values.arch ?? Object.keys(BINARIES);
if (values.binary && arches.length !== 1) fail('--binary needs exactly one --arch');
const outDir = resolve(values['out-dir'] ?? join(root, 'dist'));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const maintainer =
  process.env.DEBFULLNAME && process.env.DEBEMAIL
    ? `${process.env.DEBFULLNAME} <${process.env.DEBEMAIL}>`
    : 'dlock developers <maintainers@users.noreply.a-seed-d204983a.example>';

// Where each file goes: Debian's paths for a package's man pages and shell completions.
const FILES = [
  ['usr/share/bash-completion/completions/dlock', () => readFileSync(join(root, 'completions/dlock.bash'))],
  ['usr/share/zsh/vendor-completions/_dlock', () => readFileSync(join(root, 'completions/dlock.zsh'))],
  ['usr/share/fish/vendor_completions.d/dlock.fish', () => readFileSync(join(root, 'completions/dlock.fish'))],
  // gzip -9n: no name or time in the header, so the same page gives the same bytes.
  ['usr/share/man/man1/dlock.1.gz', () => gzipSync(readFileSync(join(root, 'man/dlock.1')), { level: 9 })],
  ['usr/share/doc/dlock/copyright', copyright],
  ['usr/share/doc/dlock/changelog.gz', () => gzipSync(debianChangelog(), { level: 9 })],
];

for (const arch of arches) {
  if (!BINARIES[arch]) fail(`unknown --arch ${arch}: one of ${Object.keys(BINARIES).join(', ')}`);
  const binary = resolve(values.binary ?? join(root, BINARIES[arch]));
  try {
    statSync(binary);
  } catch {
    fail(`${binary} is missing: run \`npm run build:deb\` (it builds the binaries first)`);
  }
  const started = performance.now();
  mkdirSync(outDir, { recursive: true });
  const stage = mkdtempSync(join(outDir, '.deb-'));
  try {
    chmodSync(stage, 0o755); // the package's "./": mkdtemp makes it 0700
    const put = (path) => (mkdirSync(dirname(join(stage, path)), { recursive: true }), path);
    copyFileSync(binary, join(stage, put('usr/bin/dlock')));
    chmodSync(join(stage, 'usr/bin/dlock'), 0o755);
    for (const [path, content] of FILES) {
      writeFileSync(join(stage, put(path)), content());
      chmodSync(join(stage, path), 0o644);
    }
    const installedKiB = Math.ceil(du(stage) / 1024);
    mkdirSync(join(stage, 'DEBIAN'), { mode: 0o755 });
    // The binary is Bun's runtime with dlock inside: it needs glibc 2.17 or newer (its newest symbol
    // version, amd64 and arm64 alike) and nothing else.
    const control = [
      'Package: dlock',
      `Version: ${pkg.version}`,
      `Architecture: ${arch}`,
      `Maintainer: ${maintainer}`,
      `Installed-Size: ${installedKiB}`,
      'Depends: libc6 (>= 2.17)',
      'Section: utils',
      'Priority: optional',
      `Description: ${pkg.description.split(': ')[0]}`,
      ' dlock runs a command under a Redis lock, renews the lock while the command',
      ' runs and passes the command a fencing token (DLOCK_FENCING_TOKEN). Cron jobs',
      ' and CI steps on many hosts take turns, or skip a run, with one line:',
      ' dlock run <key> -- <command>. This is the standalone build: no Node.js needed.',
      '',
    ].join('\n');
    writeFileSync(join(stage, 'DEBIAN/control'), control);
    chmodSync(join(stage, 'DEBIAN/control'), 0o644);
    const deb = join(outDir, `dlock_${pkg.version}_${arch}.deb`);
    // gzip -6: every dpkg reads it; 15 s for the 110 MB binary here (-9: 20 s for 0.2% less; xz is slower still).
    execFileSync('dpkg-deb', ['--root-owner-group', '-Zgzip', '-z6', '--build', stage, deb], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    console.log(`build-deb: ${deb} (${(statSync(deb).size / 1e6).toFixed(1)} MB) in ${seconds}s`);
  } catch (error) {
    fail(error.stderr?.toString().trim() || error.message);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

/** Debian's machine-readable copyright file: the MIT license of LICENSE. */
function copyright() {
  const license = readFileSync(join(root, 'LICENSE'), 'utf8');
  const holder = license.match(/^Copyright (.*)$/m)[1];
  const text = license
    .slice(license.indexOf('Permission'))
    .trim()
    .split('\n')
    .map((line) => (line.trim() === '' ? ' .' : ` ${line}`))
    .join('\n');
  return [
    'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/',
    'Upstream-Name: dlock',
    '',
    'Files: *',
    `Copyright: ${holder.replace(/^\(c\)\s*/i, '')}`,
    'License: MIT',
    text,
    '',
  ].join('\n');
}

/**
 * The one entry Debian's tools expect of a native package's changelog; the changes themselves are in
 * the project's CHANGELOG.md. Dated by the last commit (SOURCE_DATE_EPOCH first), so a rebuild matches.
 */
function debianChangelog() {
  let seconds = Number(process.env.SOURCE_DATE_EPOCH);
  if (!seconds) {
    try {
      seconds = Number(execFileSync('git', ['log', '-1', '--format=%ct'], { cwd: root, encoding: 'utf8' }).trim());
    } catch {
      seconds = Math.floor(Date.now() / 1000);
    }
  }
  const date = new Date(seconds * 1000).toUTCString().replace('GMT', '+0000');
  return [
    `dlock (${pkg.version}) stable; urgency=medium`,
    '',
    `  * dlock ${pkg.version}: its changes are in the project's CHANGELOG.md.`,
    '',
    ` -- ${maintainer}  ${date}`,
    '',
  ].join('\n');
}

function du(dir) {
  return Number(execFileSync('du', ['-sb', dir], { encoding: 'utf8' }).split('\t')[0]);
}

function fail(message) {
  console.error(`build-deb: ${message}`);
  process.exit(1);
}
