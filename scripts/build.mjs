// Build dist/dlock.cjs: one CommonJS bundle of src/ and its dependencies, used by bin/dlock
// and by the standalone executable (scripts/build-binary.mjs). Modules imported with import()
// stay lazy inside it.

import { build } from 'esbuild';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));

// The SHA-1 of each Lua script (EVALSHA names), so that a plain run needs no node:crypto.
const { outputFiles } = await build({ entryPoints: ['src/lock/scripts.ts'], bundle: true, platform: 'node', format: 'cjs', write: false, logLevel: 'warning' });
const scripts = { exports: {} };
new Function('module', 'exports', outputFiles[0].text)(scripts, scripts.exports);
const scriptSha1 = Object.fromEntries(
  Object.entries(scripts.exports)
    .filter(([, lua]) => typeof lua === 'string')
    .map(([name, lua]) => [name, createHash('sha1').update(lua).digest('hex')]),
);

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
  define: { __DLOCK_VERSION__: JSON.stringify(version), __DLOCK_SCRIPT_SHA1__: JSON.stringify(scriptSha1) },
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

// V8 code cache for bin/dlock: run the CLI once along the path users take (commander,
// validation, the run command, ioredis, acquire, the child, release) and save every function
// compiled on the way. Trained against a throwaway redis-server when one is installed; without
// one, against a loopback port where nothing listens (the run then exits 69 by design, and the
// cache covers start-up and connecting but not acquire and release).
rmSync('dist/dlock.cjs.cache', { force: true });
const port = await freePort();
const server = await startRedis(port);
try {
  const training = spawnSync(process.execPath, ['bin/dlock', 'run', '--redis', `redis://127.0.0.1:${port}`, 'build-cache', '--', 'true'], {
    env: { ...process.env, DLOCK_WRITE_CODE_CACHE: '1' },
    stdio: 'ignore',
  });
  const expected = server ? 0 : 69;
  if (training.status !== expected) throw new Error(`code cache training run exited ${training.status}, expected ${expected}`);
} finally {
  server?.kill('SIGKILL');
}

function freePort() {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/** A redis-server on `port` that accepts connections, or undefined (none installed, or it did not start). */
async function startRedis(port) {
  const server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const exited = new Promise((resolve) => {
    server.on('error', () => resolve(true));
    server.on('exit', () => resolve(true));
  });
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    const reachable = await new Promise((resolve) => {
      const socket = connect(port, '127.0.0.1', () => (socket.destroy(), resolve(true)));
      socket.on('error', () => resolve(false));
    });
    if (reachable) return server;
    if (await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve(false), 20))])) break;
  }
  server.kill('SIGKILL');
  console.warn('build: no redis-server to train the code cache on; trained on a refused connection (acquire and release are compiled at run time)');
  return undefined;
}
