// Build dist/dlock.cjs: one CommonJS bundle of src/ and its dependencies, used by bin/dlock
// and by the standalone executable (scripts/build-binary.mjs). Modules imported with import()
// stay lazy inside it.

import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));

await build({
  entryPoints: ['src/main.ts'],
  outfile: 'dist/dlock.cjs',
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  minify: true,
  keepNames: false,
  legalComments: 'linked',
  define: { __DLOCK_VERSION__: JSON.stringify(version) },
  alias: {
    debug: './scripts/stubs/debug.cjs',
    tls: './scripts/stubs/lazy-tls.cjs',
    assert: './scripts/stubs/lazy-assert.cjs',
    dns: './scripts/stubs/lazy-dns.cjs',
    crypto: './scripts/stubs/lazy-crypto.cjs',
  },
  loader: { '.bash': 'text', '.zsh': 'text', '.fish': 'text' },
  logLevel: 'warning',
});

// V8 code cache for bin/dlock: run the CLI once along the `run` path (commander, validation,
// the run command, ioredis) against a loopback port where nothing listens, and save every
// function compiled on the way. The run fails with 69 by design; only the cache matters.
rmSync('dist/dlock.cjs.cache', { force: true });
const closedPort = await new Promise((resolve) => {
  const server = createServer().listen(0, '127.0.0.1', () => {
    const { port } = server.address();
    server.close(() => resolve(port));
  });
});
const training = spawnSync(process.execPath, ['bin/dlock', 'run', '--redis', `redis://127.0.0.1:${closedPort}`, 'build-cache', '--', 'true'], {
  env: { ...process.env, DLOCK_WRITE_CODE_CACHE: '1' },
  stdio: 'ignore',
});
if (training.status !== 69) throw new Error(`code cache training run exited ${training.status}, expected 69`);
