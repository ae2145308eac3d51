// What a plain `dlock run k -- true` of the npm build loads: Node built-ins it does not need
// (crypto, tls, dns, assert) stay out of start-up (scripts/stubs/, the scripts' SHA-1s computed
// by scripts/build.mjs, newOwnerToken). Node-only by nature (process.moduleLoadList is Node's): under
// `npm run test:binary` it still runs bin/dlock; the binary's start-up is measured by `npm run bench`.

import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';
import { cleanEnv } from '../helpers/cli.js';
import { RedisServer } from '../../support/redis-server.mjs';
import { tempDir } from '../fixtures/observe.js';
import { useRedisServer } from '../helpers/server.js';

const BIN = fileURLToPath(new URL('../../bin/dlock', import.meta.url));
let redis: RedisServer;
useRedisServer((server) => (redis = server));

/** A --require preload that writes the modules Node loaded to a file at its exit, and its reader. */
function moduleList(): { preload: string; loaded: () => string[] } {
  const dir = tempDir();
  const preload = join(dir, 'list.cjs');
  const out = join(dir, 'modules.txt');
  writeFileSync(
    preload,
    `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(out)}, process.moduleLoadList.join('\\n')));\n`,
  );
  return { preload, loaded: () => readFileSync(out, 'utf8').split('\n') };
}

test('a plain run loads no crypto, tls, dns or assert module', async () => {
  const { preload, loaded } = moduleList();
  const code = await new Promise<number | null>((resolve) => {
    execFile(
      process.execPath,
      ['--require', preload, BIN, 'run', '--redis', redis.url, 'startup-modules', '--', 'true'],
      { env: cleanEnv() },
      (error) => resolve(error ? (error.code as number) : 0),
    );
  });
  expect(code).toBe(0);
  expect(loaded()).toContain('NativeModule net');
  expect(loaded().filter((name) => /^NativeModule (crypto|tls|dns|assert|internal\/crypto\/)/.test(name))).toEqual([]);
});

test('a run that prints nothing never opens stdout or stderr (their streams are set up on first write)', async () => {
  const { preload, loaded } = moduleList();
  // Output to files: Node writes there through a SyncWriteStream, made when process.stdout or
  // process.stderr is first used.
  const code = await new Promise<number | null>((resolve) => {
    execFile(
      '/bin/sh',
      [
        '-c',
        '"$@" >/dev/null 2>/dev/null',
        'sh',
        process.execPath,
        '--require',
        preload,
        BIN,
        'run',
        '--redis',
        redis.url,
        'startup-stdio',
        '--',
        'true',
      ],
      { env: cleanEnv() },
      (error) => resolve(error ? (error.code as number) : 0),
    );
  });
  expect(code).toBe(0);
  expect(loaded()).not.toContain('NativeModule internal/fs/sync_write_stream');
});

test('prom-client loads only for dlock metrics: a plain run loads none of the modules it needs', async () => {
  const dir = tempDir();
  const preload = join(dir, 'list.cjs');
  writeFileSync(
    preload,
    `process.on('exit', () => require('node:fs').writeFileSync(process.env.MODULES_OUT, process.moduleLoadList.join('\\n')));\n`,
  );
  const loaded = async (args: string[]) => {
    const out = join(dir, `${args[0]}.txt`);
    await new Promise<void>((resolve) => {
      execFile(process.execPath, ['--require', preload, BIN, ...args], { env: cleanEnv({ MODULES_OUT: out }) }, () =>
        resolve(),
      );
    });
    return readFileSync(out, 'utf8').split('\n');
  };
  // prom-client's own requirements (its Pushgateway, its default metrics): http, zlib, v8, perf_hooks.
  const promClient = (name: string) => /^NativeModule (http|zlib|v8|perf_hooks)$/.test(name);
  expect((await loaded(['metrics', '--redis', redis.url])).filter(promClient).length).toBeGreaterThan(0);
  expect((await loaded(['run', '--redis', redis.url, 'startup-prom', '--', 'true'])).filter(promClient)).toEqual([]);
});

test('--ping loads fetch (undici) and the monitor only when asked: a plain run loads none of it', async () => {
  const dir = tempDir();
  const preload = join(dir, 'list.cjs');
  writeFileSync(
    preload,
    `process.on('exit', () => require('node:fs').writeFileSync(process.env.MODULES_OUT, process.moduleLoadList.join('\\n')));\n`,
  );
  const loaded = async (name: string, flags: string[]) => {
    const out = join(dir, `${name}.txt`);
    const args = [BIN, 'run', '--redis', redis.url, ...flags, 'startup-ping', '--', 'true'];
    await new Promise<void>((resolve) => {
      execFile(process.execPath, ['--require', preload, ...args], { env: cleanEnv({ MODULES_OUT: out }) }, () =>
        resolve(),
      );
    });
    return readFileSync(out, 'utf8').split('\n');
  };
  // What fetch needs: undici and Node's HTTP parser.
  const fetchModules = (name: string) => /undici|http_parser/.test(name);
  const ping = ['--ping', 'http://127.0.0.1:9/x', '--ping-timeout', '500ms'];
  expect((await loaded('ping', ping)).filter(fetchModules).length).toBeGreaterThan(0);
  expect((await loaded('plain', [])).filter(fetchModules)).toEqual([]);
});

/** calls=N of one command in INFO commandstats. */
async function calls(command: string): Promise<number> {
  const info = await redis.client().info('commandstats');
  return Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(info)?.[1] ?? 0);
}

test('the SHA-1s made at build time are the ones Redis knows: a second run sends only EVALSHA', async () => {
  const run = () =>
    new Promise<number | null>((resolve) => {
      execFile(BIN, ['run', '--redis', redis.url, 'startup-sha', '--', 'true'], { env: cleanEnv() }, (error) =>
        resolve(error ? (error.code as number) : 0),
      );
    });
  expect(await run()).toBe(0);
  const [evals, evalshas] = [await calls('eval'), await calls('evalsha')];
  expect(await run()).toBe(0);
  expect(await calls('eval')).toBe(evals);
  expect(await calls('evalsha')).toBeGreaterThan(evalshas);
});

test('--version alone is answered by bin/dlock without the bundle, with the version the bundle has', async () => {
  const { preload, loaded } = moduleList();
  const node = (args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, args, { env: cleanEnv() }, (error, stdout, stderr) =>
        resolve({ code: error ? (error.code as number) : 0, stdout, stderr }),
      );
    });
  const fast = await node(['--require', preload, BIN, '--version']);
  const bundled = await node([fileURLToPath(new URL('../../dist/dlock.cjs', import.meta.url)), '--version']);
  expect(fast).toEqual({ code: 0, stdout: bundled.stdout, stderr: '' });
  expect(bundled.stdout).toMatch(/^\d+\.\d+\.\d+\S*\n$/);
  expect(loaded()).not.toContain('NativeModule vm'); // bin/dlock loads the bundle with vm
  expect(await node([BIN, '-V'])).toEqual(fast);
});

test('bin/dlock loads the bundle with the code cache the build trained, and V8 accepts it', async () => {
  // A rejected cache (another Node, other V8 flags, a bundle rebuilt without retraining) still
  // runs, only ~25 ms slower: nothing but this check would notice.
  const dir = tempDir();
  const preload = join(dir, 'cache-check.cjs');
  const out = join(dir, 'rejected.txt');
  writeFileSync(
    preload,
    `const vm = require('node:vm');
const { writeFileSync } = require('node:fs');
const Script = vm.Script;
vm.Script = class extends Script {
  constructor(source, options) {
    super(source, options);
    if (options && options.cachedData) process.on('exit', () => writeFileSync(${JSON.stringify(out)}, String(this.cachedDataRejected)));
  }
};\n`,
  );
  const code = await new Promise<number | null>((resolve) => {
    execFile(
      process.execPath,
      ['--require', preload, BIN, 'run', '--redis', redis.url, 'startup-cache', '--', 'true'],
      { env: cleanEnv() },
      (error) => resolve(error ? (error.code as number) : 0),
    );
  });
  expect(code).toBe(0);
  expect(readFileSync(out, 'utf8')).toBe('false');
});
