// Build dist/dlock-linux-x64 (and dist/dlock-linux-x64.sha256, and its line of a dist/SHA256SUMS):
// a standalone executable that needs no Node and no node_modules on the target, compiled with Bun (`bun build --compile --bytecode`). Offline: Bun is the pinned
// devDependency `bun` (its Linux x64 build, @oven/bun-linux-x64, comes with `npm ci`), it is
// also the runtime copied into the executable (--compile-executable-path: nothing to download),
// and the app is the esbuild bundle dist/dlock.cjs (run `npm run build` first; `npm run
// build:binary` does both) behind scripts/binary-main.cjs, with dist/beat.cjs (built here) for
// `dlock heartbeat`.
//
//   node scripts/build-binary.mjs [--out <file>]
//   node scripts/build-binary.mjs --target <linux-arm64|linux-x64-baseline|…> [--out <file>]   (another
//     platform's executable, on the Bun runtime scripts/bun-runtimes.mjs fetches and checks; every
//     target at once: scripts/build-binaries.mjs)
//   node scripts/build-binary.mjs --floor --out <file>   (the bench's floor: an empty program, compiled alike)
//
// Why Bun and not Node's single executable or pkg: docs/install.md, "Why Bun's compiler for the binary".

import { build } from 'esbuild';
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { hostBun, runtimePath, TARGETS } from './bun-runtimes.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const bundle = join(root, 'dist/dlock.cjs');
const entry = join(root, 'scripts/binary-main.cjs');

const { values } = parseArgs({
  options: { out: { type: 'string' }, floor: { type: 'boolean' }, target: { type: 'string', default: 'linux-x64' } },
});
if (values.floor && !values.out) fail('--floor needs --out <file>');
if (!TARGETS[values.target]) fail(`unknown --target ${values.target}: one of ${Object.keys(TARGETS).join(', ')}`);
const out = resolve(values.out ?? join(root, `dist/dlock-${values.target}`));

if (process.platform !== 'linux' || process.arch !== 'x64') {
  fail(
    `the standalone executable is built on Linux x64 only (this is ${process.platform} ${process.arch}); the npm package (bin/dlock) runs everywhere Node does`,
  );
}
if (!existsSync(bundle)) fail(`${bundle} is missing: run \`npm run build\` first`);
const bun =
  hostBun() ?? fail('Bun is not installed: run `npm ci` (the devDependency `bun` brings @oven/bun-linux-x64)');
// The runtime copied into the executable: this host's Bun, or the target's (fetched once, checked).
const host = values.target === 'linux-x64';
let runtime = bun;
try {
  if (!host) runtime = runtimePath(values.target);
} catch (error) {
  fail(`the Bun runtime for ${values.target}: ${error.stderr?.toString().trim() || error.message}`);
}

if (values.floor) {
  // What any program compiled this way costs to start (bench/sections/overhead.mjs): no dlock in it.
  const empty = join(dirname(out), 'floor-main.cjs');
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(empty, "'use strict';\n");
  // prettier-ignore
  run(bun, [
    'build', empty, '--compile', '--bytecode', '--minify', '--format=cjs', `--compile-executable-path=${bun}`,
    '--no-compile-autoload-dotenv', '--no-compile-autoload-bunfig',
    '--no-compile-autoload-tsconfig', '--no-compile-autoload-package-json', '--outfile', out,
  ], { ...process.env, DO_NOT_TRACK: '1' });
  rmSync(empty, { force: true });
  process.exit(0);
}

// `dlock heartbeat` is answered before the bundle loads (a job may heartbeat often): its code,
// src/bounds/beat.ts, as a bundle of its own (3 KB) that scripts/binary-main.cjs requires first.
await build({
  entryPoints: [join(root, 'src/bounds/beat.ts')],
  bundle: true,
  platform: 'node',
  format: 'cjs',
  outfile: join(root, 'dist/beat.cjs'),
  logLevel: 'warning',
});

const started = performance.now();
mkdirSync(dirname(out), { recursive: true });
rmSync(out, { force: true });
rmSync(`${out}.sha256`, { force: true });
// A compiled Bun executable would otherwise read .env and bunfig.toml from the directory it is
// started in: dlock's settings come from its flags and DLOCK_* variables only.
// --compile-jit-policy: JavaScriptCore's JIT tier-up thresholds ×10 until start-up is over
// (src/jit.ts puts the normal policy back): ~8 ms less CPU per run (docs/performance.md, "Start-up").
// prettier-ignore
run(bun, [
  'build', entry, '--compile', '--bytecode', '--minify', '--format=cjs', '--compile-jit-policy=10',
  `--compile-executable-path=${runtime}`, ...(host ? [] : [`--target=${TARGETS[values.target].bun}`]),
  '--no-compile-autoload-dotenv', '--no-compile-autoload-bunfig',
  '--no-compile-autoload-tsconfig', '--no-compile-autoload-package-json',
  '--outfile', out,
], { ...process.env, DO_NOT_TRACK: '1' });

// Smoke check: with no environment at all it says the package version, and nothing else (on a target
// this machine runs: the others are run by test/slow/binaries.test.ts where they can run).
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const check = TARGETS[values.target].runs
  ? spawnSync(out, ['--version'], { env: {}, cwd: tmpdir(), encoding: 'utf8' })
  : { stdout: `${version}\n`, stderr: '' };
if (check.stdout !== `${version}\n` || check.stderr !== '') {
  fail(
    `${out} --version printed ${JSON.stringify(check.stdout)} and ${JSON.stringify(check.stderr)} on stderr; expected ${version}`,
  );
}
// The checksum to publish beside it (docs/install.md, "The standalone binary": `sha256sum -c`): a
// file of its own for linux-x64 only (the README's install fetches it); every target's sum is in the
// SHA256SUMS of `npm run build:binaries`, whose line for this file is rewritten when one is here, so
// that a rebuild of one binary (build:binary, build:deb, the bench, npm test) does not leave it stale.
const sha256 = createHash('sha256').update(readFileSync(out)).digest('hex');
if (host) writeFileSync(`${out}.sha256`, `${sha256}  ${basename(out)}\n`);
updateSums(join(dirname(out), 'SHA256SUMS'), basename(out), sha256);
const seconds = ((performance.now() - started) / 1000).toFixed(1);
const megabytes = (statSync(out).size / 1e6).toFixed(1);
console.log(`build-binary: ${out} (${megabytes} MB, sha256 ${sha256}, bun ${bunVersion()}) in ${seconds}s`);

/** Rewrite `name`'s line of the `sha256sum` file `file`, if it has one; keep every other line as it is. */
function updateSums(file, name, sha256) {
  if (!existsSync(file)) return;
  const before = readFileSync(file, 'utf8');
  const after = before.replace(/^[0-9a-f]{64} ([ *])(.*)$/gm, (line, mode, listed) =>
    listed === name ? `${sha256} ${mode}${name}` : line,
  );
  if (after !== before) writeFileSync(file, after);
}

function bunVersion() {
  return execFileSync(bun, ['--version'], { encoding: 'utf8' }).trim();
}

/** Run a build step quietly; on failure show what it printed. */
function run(file, args, env = process.env) {
  try {
    execFileSync(file, args, { stdio: 'pipe', env, cwd: root });
  } catch (error) {
    fail(`${file} ${args.join(' ')} failed: ${error.stderr?.toString().trim() || error.message}`);
  }
}

function fail(message) {
  console.error(`build-binary: ${message}`);
  process.exit(1);
}
