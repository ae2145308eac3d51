// Secrets next to dlock: debug settings CI jobs set for other tools, passwords in the
// command line (ps, the stored `cmd`), and a comma inside a password in DLOCK_REDIS_URL.

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, test } from 'vitest';
import { cleanEnv, dlock } from '../helpers/cli.js';
import { freePort, RedisServer } from '../../support/redis-server.mjs';
import { childEnv, childPid, HOLD, spawnDlock, tempDir } from '../fixtures/observe.js';
import { useRedisServer } from '../helpers/server.js';

const PASSWORD = 'Qx7,Zp9-w';
const ENCODED = encodeURIComponent(PASSWORD);

let server: RedisServer;
let admin: Redis;
let url: string;
useRedisServer(
  (started) => {
    server = started;
    admin = new Redis({ port: server.port, password: PASSWORD });
    url = `redis://:${ENCODED}@127.0.0.1:${server.port}`;
  },
  { args: ['--requirepass', PASSWORD] },
);
afterAll(() => admin.disconnect());

/** No piece of the password (split at its commas and other separators) in any output. */
function expectNoSecret(text: string, ...more: string[]): void {
  for (const secret of [PASSWORD, ENCODED, 'Qx7', 'Zp9', ...more]) expect(text).not.toContain(secret);
}

describe('DEBUG set for other tools', () => {
  test.for(['ioredis:*', '*'])('DEBUG=%s prints neither the password nor the owner token', async (debug) => {
    const dir = tempDir();
    const running = spawnDlock(['run', '--redis', url, '-v', 'dbg', '--', HOLD, dir], {
      env: cleanEnv({ DEBUG: debug, DEBUG_COLORS: 'no' }),
    });
    const { DLOCK_TOKEN } = await childEnv(dir);
    expect(DLOCK_TOKEN).toMatch(/^[0-9a-f]{32}$/);
    writeFileSync(join(dir, 'stop'), '');
    const result = await running.result;
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/^dlock: acquired dbg/);
    expectNoSecret(result.stdout + result.stderr, DLOCK_TOKEN);
    expect(result.stderr).not.toMatch(/ioredis/);
  });
});

describe('the password in the command line', () => {
  test('ps shows dlock with the --redis password masked for the whole run', async () => {
    const dir = tempDir();
    const running = spawnDlock(['run', '--redis', url, 'ps-title', '--', HOLD, dir]);
    await childPid(dir);
    const shown = readFileSync(`/proc/${running.process.pid}/cmdline`, 'utf8').replace(/\0+/g, ' ');
    expect(shown).toContain(`redis://:***@127.0.0.1:${server.port}`);
    expect(shown).toContain('ps-title');
    expectNoSecret(shown);
    writeFileSync(join(dir, 'stop'), '');
    expect((await running.result).code).toBe(0);
  });

  test('the stored cmd masks a %-encoded password in a URL and a password given as its own argument', async () => {
    const dir = tempDir();
    const running = spawnDlock([
      'run',
      '--redis',
      url,
      'meta',
      '--',
      HOLD,
      dir,
      `redis://user:${encodeURIComponent(PASSWORD + '@/')}@db.example:6379/0`,
      PASSWORD,
      'banana',
    ]);
    await childPid(dir);
    const cmd = await admin.hget('dlock:{meta}', 'cmd');
    expect(cmd).toBe(`${HOLD} ${dir} redis://user:***@db.example:6379/0 *** banana`);
    writeFileSync(join(dir, 'stop'), '');
    expect((await running.result).code).toBe(0);
  });

  test('a one-letter password is not spelled out in the stored cmd (masking every "a" would store "b***n***n***")', async () => {
    const plain = await RedisServer.start();
    const reader = new Redis({ port: plain.port });
    try {
      const dir = tempDir();
      const running = spawnDlock([
        'run',
        '--redis',
        `redis://:a@127.0.0.1:${plain.port}`,
        'one',
        '--',
        HOLD,
        dir,
        'banana',
        'a',
        '--pw=a',
      ]);
      await childPid(dir);
      expect(await reader.hget('dlock:{one}', 'cmd')).toBe(`${HOLD} ${dir} banana *** --pw=***`);
      writeFileSync(join(dir, 'stop'), '');
      expect((await running.result).code).toBe(0);
    } finally {
      reader.disconnect();
      await plain.close();
    }
  });
});

describe('DLOCK_REDIS_URL', () => {
  test('a comma inside a password never shows a piece of it, reachable or not', async () => {
    const [closed, closed2] = [await freePort(), await freePort()];
    for (const list of [
      `redis://:${PASSWORD}@127.0.0.1:${closed}`,
      `redis://:${PASSWORD}@127.0.0.1:${closed},redis://127.0.0.1:${closed2}`,
    ]) {
      const result = await dlock(['run', 'comma', '--', 'true'], { env: cleanEnv({ DLOCK_REDIS_URL: list }) });
      expect(result.code).toBe(69);
      expect(result.stderr).toMatch(/^dlock: [^\n]*\n$/);
      expectNoSecret(result.stderr + result.stdout);
    }
    const ok = await dlock(['run', 'comma', '--', 'true'], {
      env: cleanEnv({ DLOCK_REDIS_URL: `redis://:${PASSWORD}@127.0.0.1:${server.port}` }),
    });
    expect(ok.code).toBe(0);
  });
});
