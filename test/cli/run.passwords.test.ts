// "Passwords in URLs never appear in any output" (docs/reference/exit-codes.md): every command, every
// verbosity, flag or env, a server that is not there and one that refuses the password.

import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { cleanEnv, dlock, start, type Result } from '../helpers/cli.js';
import { expectOneError } from '../helpers/hostile.js';
import { freePort, RedisServer } from '../../support/redis-server.mjs';
import { childPid, HOLD, removeTempDirs, tempDir } from '../fixtures/observe.js';

// The password as written in the URL (%-encoded) and as decoded; neither may leak.
const SECRET = 'hunter2-Xq9';
const ENCODED = 'p%40ss%3Aw0rd-Zk7';
const DECODED = 'p@ss:w0rd-Zk7';
const RIGHT = 'correct-horse-Vb4';

let secured: RedisServer;
let closedPort: number;
beforeAll(async () => {
  secured = await RedisServer.start({ args: ['--requirepass', RIGHT] });
  closedPort = await freePort();
});
afterAll(async () => {
  await secured.close();
  removeTempDirs();
});

function expectNoSecret(result: Result, ...secrets: string[]): void {
  for (const secret of [SECRET, ENCODED, DECODED, ...secrets]) {
    expect(result.stdout).not.toContain(secret);
    expect(result.stderr).not.toContain(secret);
  }
}

/** Every command that connects, in each output mode. */
const INVOCATIONS: [string, string[]][] = [
  ['run', ['run', 'pw', '--', 'true']],
  ['run -v', ['run', '-v', 'pw', '--', 'true']],
  ['run --log-format json', ['run', '--log-format', 'json', 'pw', '--', 'true']],
  ['status', ['status', 'pw']],
  ['status --json', ['status', '--json', 'pw']],
  ['status (list)', ['status']],
  ['release --force', ['release', '--force', 'pw']],
];

describe('nothing listening on the port', () => {
  test.concurrent.for(INVOCATIONS)('%s: 69, the URL shown with *** for the password', async ([, args], { expect }) => {
    const url = `redis://user:${SECRET}@127.0.0.1:${closedPort}`;
    const result = await dlock([args[0], '--redis', url, ...args.slice(1)]);
    expect(result.code).toBe(69);
    expectNoSecret(result);
    expect(result.stderr).toContain(`redis://user:***@127.0.0.1:${closedPort}`);
  });

  test.concurrent.for([
    ['password only', `redis://:${SECRET}@127.0.0.1:PORT`],
    ['%-encoded password', `redis://:${ENCODED}@127.0.0.1:PORT`],
    ['user and %-encoded password', `redis://me:${ENCODED}@127.0.0.1:PORT/2`],
  ])('%s, from DLOCK_REDIS_URL', async ([, template], { expect }) => {
    const env = cleanEnv({ DLOCK_REDIS_URL: template.replace('PORT', String(closedPort)) });
    const result = await dlock(['run', '-v', 'pw', '--', 'true'], { env });
    expect(result.code).toBe(69);
    expectNoSecret(result);
  });
});

describe('a Redis that wants another password (requirepass)', () => {
  test.concurrent.for(INVOCATIONS)('%s: 69 "authentication failed", no password shown', async ([, args]) => {
    const url = `redis://:${SECRET}@127.0.0.1:${secured.port}`;
    const result = await dlock([args[0], '--redis', url, ...args.slice(1)]);
    expectOneError(result, 69, /authentication failed/);
    expectNoSecret(result, RIGHT);
  });

  test('with a user name too', async () => {
    const result = await dlock([
      'run',
      '--redis',
      `redis://default:${ENCODED}@127.0.0.1:${secured.port}`,
      'pw',
      '--',
      'true',
    ]);
    expect(result.code).toBe(69);
    expectNoSecret(result, RIGHT);
  });

  test('no password at all: 69, it says authentication is needed', async () => {
    const result = await dlock(['run', '--redis', secured.url, 'pw', '--', 'true']);
    expect(result.code).toBe(69);
    expect(result.stderr).toMatch(/^dlock: [^\n]*\n$/);
    expectNoSecret(result, RIGHT);
  });
});

describe('the right password', () => {
  test('run, status and release work and print no password, whatever the verbosity', async () => {
    const url = `redis://:${RIGHT}@127.0.0.1:${secured.port}`;
    const runs = await Promise.all([
      dlock(['run', '--redis', url, '-v', 'pw-ok', '--', 'true']),
      dlock(['run', '--redis', url, '--log-format', 'json', 'pw-ok2', '--', 'true']),
    ]);
    expect(runs.map((r) => r.code)).toEqual([0, 0]);

    const dir = tempDir();
    // A 4s lease: the holder must still hold after five dlock starts on a loaded machine.
    const holder = start(['run', '--redis', url, '-v', '-t', '4s', 'pw-held', '--', HOLD, dir]);
    try {
      await childPid(dir);
      const inspections = await Promise.all([
        dlock(['status', '--redis', url, '--json', 'pw-held']),
        dlock(['status', '--redis', url, 'pw-held']),
        dlock(['status', '--redis', url]),
        dlock(['status', '--redis', url, '--json']),
      ]);
      expect(inspections.map((r) => r.code)).toEqual([0, 0, 0, 0]);
      expect(JSON.parse(inspections[0].stdout).instances[0].redis).toBe(`redis://:***@127.0.0.1:${secured.port}`);
      const released = await dlock(['release', '--force', '--redis', url, 'pw-held']);
      expect(released.code).toBe(0);
      const held = await holder.result;
      expect(held.code).toBe(76);
      for (const result of [...runs, ...inspections, released, held]) expectNoSecret(result, RIGHT);
    } finally {
      holder.process.kill('SIGKILL');
    }
  });
});

test('a malformed URL with a password: 64, shown masked', async () => {
  const result = await dlock(['run', '--redis', `redis://:${SECRET}@127.0.0.1:99999`, 'pw', '--', 'true']);
  expect(result.code).toBe(64);
  expect(result.stderr).toMatch(/^dlock: [^\n]*\*\*\*[^\n]*\n$/);
  expectNoSecret(result);
});
