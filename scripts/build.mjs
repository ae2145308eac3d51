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
const { outputFiles } = await build({
  entryPoints: ['src/backends/redis/lock/scripts.ts'],
  bundle: true,
  platform: 'node',
  format: 'cjs',
  write: false,
  loader: { '.lua': 'text' },
  logLevel: 'warning',
});
const scripts = { exports: {} };
new Function('module', 'exports', outputFiles[0].text)(scripts, scripts.exports);
const scriptSha1 = Object.fromEntries(
  Object.entries(scripts.exports)
    .filter(([, lua]) => typeof lua === 'string')
    .map(([name, lua]) => [name, createHash('sha1').update(lua).digest('hex')]),
);

// Build-time patches of ioredis' start-up, each an exact text replacement that must match once
// (a changed ioredis fails the build here instead of silently losing the patch). Same behaviour.
const IOREDIS_PATCHES = [
  {
    // ioredis adds ~480 command methods, one by one, to Commander.prototype as it loads. V8 keeps
    // that prototype in fast mode and copies its whole descriptor array at every addition: 7–8 ms
    // of dlock's start-up and megabytes of garbage (5 scavenges before the first round trip).
    // Deleting a property that is not the last one added puts the object in dictionary mode
    // first, where each addition is a hash-table insert. Same methods on the same prototype.
    file: 'utils/Commander.js',
    from: 'commands.forEach(function (commandName) {',
    to: 'Commander.prototype.__dlockA = 0; Commander.prototype.__dlockB = 0; delete Commander.prototype.__dlockA; delete Commander.prototype.__dlockB;\ncommands.forEach(function (commandName) {',
  },
  {
    // The Cluster client (and its subscriber groups, connection pool, delay queue) loads on first
    // use of `Cluster` (redis+cluster:// URLs) instead of with every client.
    file: 'index.js',
    from: 'var cluster_1 = require("./cluster");\nObject.defineProperty(exports, "Cluster", { enumerable: true, get: function () { return cluster_1.default; } });',
    to: 'Object.defineProperty(exports, "Cluster", { enumerable: true, get: function () { return require("./cluster").default; } });',
  },
  {
    file: 'Redis.js',
    from: 'const cluster_1 = require("./cluster");',
    to: '',
  },
  {
    file: 'Redis.js',
    from: 'Redis.Cluster = cluster_1.default;',
    to: 'Object.defineProperty(Redis, "Cluster", { configurable: true, enumerable: true, get: () => require("./cluster").default });',
  },
];
const ioredisPatches = {
  name: 'ioredis-start-up-patches',
  setup(builder) {
    builder.onLoad({ filter: /[\\/]ioredis[\\/]built[\\/].*\.js$/ }, ({ path }) => {
      const patches = IOREDIS_PATCHES.filter(({ file }) =>
        path.replaceAll('\\', '/').endsWith(`/ioredis/built/${file}`),
      );
      if (patches.length === 0) return undefined;
      let source = readFileSync(path, 'utf8');
      for (const { from, to } of patches) {
        if (source.split(from).length !== 2)
          throw new Error(`build: ${path} no longer has the text dlock patches once (${from.split('\n')[0]})`);
        source = source.replace(from, () => to);
      }
      return { contents: source, loader: 'js' };
    });
  },
};

await build({
  entryPoints: ['src/entry.ts'],
  plugins: [ioredisPatches],
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
  loader: { '.bash': 'text', '.zsh': 'text', '.fish': 'text', '.lua': 'text' },
  logLevel: 'warning',
});

// bin/dlock reads the bundle as latin1 (no UTF-8 validation): esbuild escapes every non-ASCII
// character (its default charset), so the text is the same either way.
if (/[^\x00-\x7f]/.test(readFileSync('dist/dlock.cjs', 'latin1')))
  throw new Error('build: dist/dlock.cjs is not ASCII (bin/dlock reads it as latin1)');

// V8 code cache for bin/dlock: run the CLI once along the path users take (commander,
// validation, the run command, ioredis, waiting, acquire, the child, release) and save every function
// compiled on the way. Trained against a throwaway redis-server when one is installed; without
// one, against a loopback port where nothing listens (the run then exits 69 by design, and the
// cache covers start-up and connecting but not acquire and release).
rmSync('dist/dlock.cjs.cache', { force: true });
const port = await freePort();
const server = await startRedis(port);
let holder;
try {
  const url = `redis://127.0.0.1:${port}`;
  // The training run waits in line behind another dlock and is woken by its release, so the
  // cache also holds the waiting path (busy, line, subscription, wake-up, the ready command),
  // not only the path of a free lock (a superset of it, bar the direct spawn of the command).
  if (server) {
    holder = spawn(
      process.execPath,
      ['bin/dlock', 'run', '--redis', url, '--log-format', 'json', 'build-cache', '--', 'sleep', '0.3'],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    await new Promise((resolve, reject) => {
      let seen = '';
      holder.stderr.on('data', (chunk) => (seen += chunk) && seen.includes('"acquired"') && resolve());
      holder.on('exit', (code) =>
        reject(new Error(`code cache training: the holder exited ${code} before it held the lock`)),
      );
    });
  }
  const training = spawnSync(
    process.execPath,
    ['bin/dlock', 'run', '--redis', url, '--wait', '10s', 'build-cache', '--', 'true'],
    {
      env: { ...process.env, DLOCK_WRITE_CODE_CACHE: '1' },
      stdio: 'ignore',
    },
  );
  const expected = server ? 0 : 69;
  if (training.status !== expected)
    throw new Error(`code cache training run exited ${training.status}, expected ${expected}`);
} finally {
  holder?.kill('SIGKILL');
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
  const server = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
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
  console.warn(
    'build: no redis-server to train the code cache on; trained on a refused connection (acquire and release are compiled at run time)',
  );
  return undefined;
}
