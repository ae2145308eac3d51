// Build dist/dlock-linux-x64: a Node single executable application (SEA) that needs no Node
// and no node_modules on the target. Offline: the runtime is a copy of the node binary
// running this script, the app is the esbuild bundle dist/dlock.cjs (run `npm run build`
// first; `npm run build:binary` does both), and postject comes from devDependencies.
//
//   node scripts/build-binary.mjs [--out <file>]
//
// See https://nodejs.org/api/single-executable-applications.html

import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = fileURLToPath(new URL('..', import.meta.url));
const bundle = join(root, 'dist/dlock.cjs');
// The fuse node checks to know a blob was injected; fixed by Node's SEA implementation.
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

const { values } = parseArgs({ options: { out: { type: 'string' } } });
const out = resolve(values.out ?? join(root, `dist/dlock-${process.platform}-${process.arch}`));

if (process.platform !== 'linux') fail(`building the single executable is set up for Linux only (this is ${process.platform})`);
if (!existsSync(bundle)) fail(`${bundle} is missing: run \`npm run build\` first`);

const started = performance.now();
const work = mkdtempSync(join(tmpdir(), 'dlock-sea-'));
try {
  // 1. The preparation blob: a small entry (scripts/sea-main.cjs) plus the bundle and its V8 code cache as assets.
  const blob = join(work, 'sea-prep.blob');
  const config = join(work, 'sea-config.json');
  const assets = { 'dlock.cjs': bundle, 'dlock.cjs.cache': `${bundle}.cache` };
  writeFileSync(config, JSON.stringify({ main: join(root, 'scripts/sea-main.cjs'), output: blob, disableExperimentalSEAWarning: true, useCodeCache: false, assets }));
  // Without NODE_OPTIONS: V8 flags there would make the cache mismatch the plain runtime.
  const { NODE_OPTIONS, ...env } = process.env;
  run(process.execPath, ['--experimental-sea-config', config], env);

  // 2. The runtime: this node binary. Its debug symbols are a tenth of its size and no use to
  //    a CLI, so strip them when binutils is at hand (the result works the same either way).
  mkdirSync(dirname(out), { recursive: true });
  rmSync(out, { force: true });
  copyFileSync(process.execPath, out);
  chmodSync(out, 0o755);
  try {
    run('strip', [out]);
  } catch {
    console.warn('build-binary: `strip` not available or failed; keeping debug symbols');
  }

  // 3. Inject the blob as the NODE_SEA_BLOB note and flip the fuse. postject's LIEF warns
  //    about every unnamed note section of the node binary; those warnings are harmless.
  const { inject } = createRequire(import.meta.url)('postject');
  const warn = console.warn;
  console.warn = (...args) => void (/Can't find string offset for section name/.test(String(args[0])) || warn(...args));
  try {
    await inject(out, 'NODE_SEA_BLOB', readFileSync(blob), { sentinelFuse: SEA_FUSE });
  } finally {
    console.warn = warn;
  }

  // 4. Smoke check: with no Node environment it says the package version, and nothing else.
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const check = spawnSync(out, ['--version'], { env: {}, cwd: tmpdir(), encoding: 'utf8' });
  if (check.stdout !== `${version}\n` || check.stderr !== '') {
    fail(`${out} --version printed ${JSON.stringify(check.stdout)} and ${JSON.stringify(check.stderr)} on stderr; expected ${version}`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
const seconds = ((performance.now() - started) / 1000).toFixed(1);
const megabytes = (statSync(out).size / 1e6).toFixed(1);
console.log(`build-binary: ${out} (${megabytes} MB, node ${process.version}) in ${seconds}s`);

/** Run a build step quietly; on failure show what it printed. */
function run(file, args, env = process.env) {
  try {
    execFileSync(file, args, { stdio: 'pipe', env });
  } catch (error) {
    throw new Error(`${file} ${args.join(' ')} failed: ${error.stderr?.toString().trim() || error.message}`);
  }
}

function fail(message) {
  console.error(`build-binary: ${message}`);
  process.exit(1);
}
