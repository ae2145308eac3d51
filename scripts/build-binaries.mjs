// Build the standalone executable for every target (scripts/bun-runtimes.mjs lists them) into
// dist/dlock-<target>, and one dist/SHA256SUMS for all of them (`sha256sum -c SHA256SUMS`).
// Each is scripts/build-binary.mjs --target <target>: the same bundle (run `npm run build` first;
// `npm run build:binaries` does both) compiled by this host's Bun onto that target's runtime.
// Which one to pick: docs/install.md, "The standalone binary".
//
//   node scripts/build-binaries.mjs [--out-dir <dir>] [--target <name>]…

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { TARGETS } from './bun-runtimes.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const { values } = parseArgs({
  options: { 'out-dir': { type: 'string' }, target: { type: 'string', multiple: true } },
});
const outDir = resolve(values['out-dir'] ?? join(root, 'dist'));
const targets = values.target ?? Object.keys(TARGETS);

const started = performance.now();
const sums = [];
for (const target of targets) {
  const name = `dlock-${target}`;
  try {
    execFileSync(
      process.execPath,
      [join(root, 'scripts/build-binary.mjs'), '--target', target, '--out', join(outDir, name)],
      { stdio: 'inherit' },
    );
  } catch {
    process.exit(1); // build-binary said why
  }
  // One checksum file for them all (build-binary writes a .sha256 of its own for linux-x64 alone).
  sums.push(
    `${createHash('sha256')
      .update(readFileSync(join(outDir, name)))
      .digest('hex')}  ${name}\n`,
  );
}
writeFileSync(join(outDir, 'SHA256SUMS'), sums.join(''));
const seconds = ((performance.now() - started) / 1000).toFixed(1);
console.log(`build-binaries: ${targets.length} executables and ${join(outDir, 'SHA256SUMS')} in ${seconds}s`);
