// The child: its argv is never interpreted by a shell, its environment is the caller's plus
// the documented DLOCK_* variables (docs/reference/options.md) and nothing secret. And a lock can only be released by its
// owner (checked in Lua); `release --force` is the one exception and says whose it removed.

import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { extendScript } from '../../src/backends/redis/lock/extend.js';
import { lockKeys } from '../../src/backends/redis/lock/keys.js';
import { releaseScript } from '../../src/backends/redis/lock/release.js';
import { cleanEnv, dlock, start } from '../helpers/cli.js';
import { expectOneError } from '../helpers/hostile.js';
import { RedisServer } from '../../support/redis-server.mjs';
import { HOLD, onlyEvent, removeTempDirs, tempDir, waitForFile } from '../fixtures/observe.js';

const PASSWORD = 'child-must-not-see-Qz8';

let redis: RedisServer;
let admin: Redis;
let url: string;
beforeAll(async () => {
  redis = await RedisServer.start({ args: ['--requirepass', PASSWORD] });
  admin = new Redis({ host: '127.0.0.1', port: redis.port, password: PASSWORD });
  url = `redis://:${PASSWORD}@127.0.0.1:${redis.port}`;
});
afterAll(async () => {
  admin.disconnect();
  await redis.close();
  removeTempDirs();
});

/** A child that prints its argv (after the script) and environment as JSON. */
const PRINT = [
  process.execPath,
  '-e',
  'process.stdout.write(JSON.stringify({ argv: process.argv.slice(1), env: process.env }))',
  '--',
];

describe('the child argv is never interpreted by a shell', () => {
  test('shell syntax arrives verbatim and runs nothing', async () => {
    const cwd = tempDir();
    const args = [
      '$(touch x)',
      '`touch y`',
      'a; touch z',
      '*',
      '?',
      '[a]',
      '~',
      '$HOME',
      "'quoted'",
      '"double"',
      '\\',
      'a && b',
      'a | b',
      '> out',
      '',
      ' ',
      'line\nbreak',
      '--',
      '-e',
      'ключ 🔒',
    ];
    const result = await dlock(['run', '--redis', url, 'argv', '--', ...PRINT, ...args], { cwd });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).argv).toEqual(args);
    expect(readdirSync(cwd)).toEqual([]);
  });

  test('a command written as one string is looked up as one file name (127), not run by sh', async () => {
    const cwd = tempDir();
    expectOneError(
      await dlock(['run', '--redis', url, 'argv', '--', 'true; touch pwned'], { cwd }),
      127,
      /^dlock: true; touch pwned: command not found/,
    );
    expect(existsSync(join(cwd, 'pwned'))).toBe(false);
  });

  test('property: any argv arrives verbatim', async () => {
    const unit = fc.oneof(
      fc.constantFrom(...'$`\'"\\;|&<>*?[]~#(){} \n\t-='),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
    );
    // NUL cannot be in argv, and lone surrogates cannot be encoded; anything else must survive.
    const arg = fc
      .string({ unit, maxLength: 20 })
      .filter((s) => !s.includes('\0') && !/[\ud800-\udfff]/.test(s.replace(/[\ud800-\udbff][\udc00-\udfff]/g, '')));
    await fc.assert(
      fc.asyncProperty(fc.array(arg, { maxLength: 6 }), async (args) => {
        const result = await dlock(['run', '--redis', url, 'argv', '--', ...PRINT, ...args]);
        expect(result.code, result.stderr).toBe(0);
        expect(JSON.parse(result.stdout).argv).toEqual(args);
      }),
      { numRuns: 10 },
    );
  });
});

describe("the child's environment", () => {
  async function childEnvOf(args: string[], callerEnv: NodeJS.ProcessEnv): Promise<Record<string, string>> {
    const result = await dlock(['run', ...args, 'env-key', '--', ...PRINT], { env: callerEnv });
    expect(result.code, result.stderr).toBe(0);
    return JSON.parse(result.stdout).env;
  }

  function expectCallerPlusLock(child: Record<string, string>, caller: NodeJS.ProcessEnv): void {
    const added = Object.keys(child).filter((name) => !(name in caller));
    expect(added.sort()).toEqual(['DLOCK_FENCING_TOKEN', 'DLOCK_KEY', 'DLOCK_TOKEN', 'DLOCK_TTL_MS']);
    for (const [name, value] of Object.entries(caller)) expect(child[name], name).toBe(value);
    expect(child.DLOCK_KEY).toBe('env-key');
    expect(child.DLOCK_FENCING_TOKEN).toMatch(/^\d+$/);
    expect(child.DLOCK_TOKEN).toMatch(/^[0-9a-f]{32}$/);
    expect(child.DLOCK_TTL_MS).toBe('2000');
  }

  test('the caller environment plus DLOCK_KEY/FENCING_TOKEN/TOKEN/TTL_MS; no URL password added', async () => {
    const caller = cleanEnv({ CALLER_VAR: 'kept', DLOCK_PREFIX: 'dlock:' });
    const child = await childEnvOf(['--redis', url, '--ttl', '2s'], caller);
    expectCallerPlusLock(child, caller);
    expect(Object.values(child).some((value) => value.includes(PASSWORD))).toBe(false);
  });

  test("DLOCK_REDIS_PASSWORD is the caller's to pass on: dlock neither adds nor rewrites anything", async () => {
    const caller = cleanEnv({
      DLOCK_REDIS_URL: `redis://127.0.0.1:${redis.port}`,
      DLOCK_REDIS_PASSWORD: PASSWORD,
      DLOCK_TTL: '2s',
    });
    const child = await childEnvOf([], caller);
    expectCallerPlusLock(child, caller);
    // Only the caller's own variable holds it: nothing dlock derived from it.
    expect(
      Object.entries(child)
        .filter(([, value]) => value.includes(PASSWORD))
        .map(([name]) => name),
    ).toEqual(['DLOCK_REDIS_PASSWORD']);
  });
});

describe('only the owner releases', () => {
  test('the release and extend scripts refuse any other token (owner checked in Lua)', async () => {
    const keys = lockKeys('dlock:', 'owned');
    await admin.hset(keys.lock, 'owner', 'a'.repeat(32), 'fence', '1');
    await admin.pexpire(keys.lock, 60_000);
    for (const token of ['b'.repeat(32), '', 'A'.repeat(32), 'a'.repeat(31), `${'a'.repeat(32)} `, '*']) {
      expect(await releaseScript.run(admin, keys, { owner: token, notify: true }, 5000)).toBe('not-ours');
      expect(await extendScript.run(admin, keys, { owner: token, ttlMs: 1 }, 5000)).toBe(false);
    }
    expect(await admin.hget(keys.lock, 'owner')).toBe('a'.repeat(32));
    expect(await admin.pttl(keys.lock)).toBeGreaterThan(50_000);
    expect(await releaseScript.run(admin, keys, { owner: 'a'.repeat(32), notify: true }, 5000)).toBe('released');
    expect(await admin.exists(keys.lock)).toBe(0);
  });

  test('a second dlock with another token (even a forged DLOCK_TOKEN) cannot take or release the lock', async () => {
    const dir = tempDir();
    const holder = start(['run', '--redis', url, '--log-format', 'json', 'owned2', '--', HOLD, dir]);
    await holder.waitFor('"acquired"');
    const owner = await admin.hget('dlock:{owned2}', 'owner');

    const forged = cleanEnv({ DLOCK_KEY: 'owned2', DLOCK_TOKEN: 'f'.repeat(32), DLOCK_FENCING_TOKEN: '1' });
    // The forged token holds nothing: the lock it names is taken as gone (76), never taken anew.
    const second = await dlock(['run', '--redis', url, '-n', 'owned2', '--', 'true'], { env: forged });
    expectOneError(second, 76, /^dlock: owned2: the lock an enclosing dlock held .* is no longer held/);
    const plain = await dlock(['run', '--redis', url, '-n', 'owned2', '--', 'true'], { env: cleanEnv() });
    expectOneError(plain, 75, /^dlock: owned2 is busy/);
    expect(await admin.hget('dlock:{owned2}', 'owner')).toBe(owner);
    // status shows the holder but never its token (the token is what a release needs).
    const status = await dlock(['status', '--json', '--redis', url, 'owned2']);
    expect(status.stdout).toContain(`"pid":${holder.process.pid}`);
    expect(status.stdout).not.toContain(owner);

    writeFileSync(join(dir, 'stop'), '');
    expect((await holder.result).code).toBe(0);
  });

  test('release --force says whose lock it removed; the old holder then cannot delete the new one', async () => {
    const [dirA, dirC] = [tempDir(), tempDir()];
    const a = start([
      'run',
      '--redis',
      url,
      '--ttl',
      '900ms',
      '--on-lost',
      'ignore',
      '--log-format',
      'json',
      'forced',
      '--',
      HOLD,
      dirA,
    ]);
    await a.waitFor('"acquired"');
    await waitForFile(join(dirA, 'pid'));

    const forced = await dlock(['release', '--force', '--redis', url, 'forced']);
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toMatch(
      new RegExp(
        `^forced: released the lock held by \\S+ pid ${a.process.pid}, .*fence 1.*\\(command: \\S*hold\\.sh ${dirA}\\); closed to new holders for [^\\n]+ more[^\\n]*\\n$`,
      ),
    );
    expect(forced.stdout).not.toContain(PASSWORD);

    // A notices at its next renewal; its child keeps running (--on-lost ignore) while C takes over.
    await a.waitFor('"lost"');
    const c = start(['run', '--redis', url, '--log-format', 'json', 'forced', '--', HOLD, dirC]);
    await c.waitFor('"acquired"');
    const cOwner = await admin.hget('dlock:{forced}', 'owner');

    // A's child ends: A's release must leave C's lock alone (compare-and-delete on the owner).
    writeFileSync(join(dirA, 'stop'), '');
    const resultA = await a.result;
    expect(resultA.code).toBe(76);
    expect(onlyEvent(resultA.stderr, 'released')).toMatchObject({ released: false });
    expect(await admin.hget('dlock:{forced}', 'owner')).toBe(cOwner);
    expect(await admin.hget('dlock:{forced}', 'fence')).toBe('2');

    writeFileSync(join(dirC, 'stop'), '');
    expect((await c.result).code).toBe(0);
    expect(await admin.exists('dlock:{forced}')).toBe(0);
  });
});
