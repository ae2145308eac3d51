// A key of a lock that holds a value of the wrong type (issue 20, defects 7 and 8): every
// script checks its keys' types before it writes, so an error means nothing changed, and the
// message names the key at fault, not the fence counter. Real redis-server; the foreign values
// are planted with redis-cli as a user (or a stray script) would.

import { execFileSync } from 'node:child_process';
import type { Redis } from 'ioredis';
import { expect, test } from 'vitest';
import { dlock } from '../helpers/cli.js';
import { expectOneError } from '../helpers/hostile.js';
import { useRedisServer } from '../helpers/server.js';
import { RedisServer } from '../../support/redis-server.mjs';

let server: RedisServer;
let admin: Redis;
useRedisServer((started) => {
  server = started;
  admin = started.client();
});

/** redis-cli against the test's server. */
function cli(...args: string[]): string {
  return execFileSync('redis-cli', ['-p', String(server.port), ...args], { encoding: 'utf8' }).trim();
}

/** Every key of the lock and its dump: what must stay the same when dlock refuses. */
async function snapshot(key: string): Promise<Record<string, string>> {
  const names = (await admin.keys(`dlock:{${key}}*`)).sort();
  const dumps = await Promise.all(names.map((name) => admin.dumpBuffer(name)));
  return Object.fromEntries(names.map((name, i) => [name, dumps[i]?.toString('base64') ?? '']));
}

const NAMES: [string, string][] = [
  [':line', "dlock's line of waiters \\(a sorted set\\)"],
  [':line:expiry', "dlock's place leases of the line \\(a sorted set\\)"],
  [':line:info', "dlock's details of the waiters in line \\(a hash\\)"],
  [':holders', "dlock's holders of --slots/--shared \\(a sorted set\\)"],
];

test.for(NAMES)('a string in %s: run (each mode), status, release --force name it (69)', async ([suffix, what]) => {
  const key = `wrong${suffix.replace(/:/g, '-')}`;
  cli('SET', `dlock:{${key}}${suffix}`, 'x');
  const before = await snapshot(key);
  const name = `dlock:\\{${key}\\}${suffix}`;
  const pattern = new RegExp(`^dlock: redis://[\\d.:]+: the key ${name} holds a string, not ${what}: delete`);
  const runs = [
    ['run', '-n'],
    ['run', '--shared', '-n'],
    ['run', '--slots', '2', '-n'],
  ];
  const commands = [...runs, ['status'], ['release', '--force']];
  for (const args of commands) {
    const result = await dlock([...args, '--redis', server.url, key, ...(args[0] === 'run' ? ['--', 'true'] : [])]);
    expectOneError(result, 69, pattern);
    expect(result.stderr).not.toContain(':fence');
  }
  expect(await snapshot(key)).toEqual(before);
});

test('a hash in :done: run --once-per names the done mark (69); a run without --once-per runs', async () => {
  cli('HSET', 'dlock:{wrong-done}:done', 'a', 'b');
  const before = await snapshot('wrong-done');
  const result = await dlock(['run', '--once-per', '1h', '--redis', server.url, 'wrong-done', '--', 'true']);
  const pattern = /: the key dlock:\{wrong-done\}:done holds a hash, not dlock's --once-per done mark \(a string\)/;
  expectOneError(result, 69, pattern);
  expect(await snapshot('wrong-done')).toEqual(before);
  expect((await dlock(['run', '--redis', server.url, 'wrong-done', '--', 'true'])).code).toBe(0);
});

test('a fence counter that is not one (a word, a negative, the largest integer): nothing is written', async () => {
  const values = [
    ['fence-word', 'abc'],
    ['fence-negative', '-5'],
    ['fence-largest', '9223372036854775807'],
  ];
  for (const [key, value] of values) {
    cli('SET', `dlock:{${key}}:fence`, value);
    for (const args of [['run', '-n'], ['run', '--shared', '-n'], ['status']]) {
      const result = await dlock([...args, '--redis', server.url, key, ...(args[0] === 'run' ? ['--', 'true'] : [])]);
      const pattern = new RegExp(`: the key dlock:\\{${key}\\}:fence holds a value that is not an integer, not dlock`);
      expectOneError(result, 69, pattern);
    }
    expect(await admin.keys(`dlock:{${key}}*`)).toEqual([`dlock:{${key}}:fence`]);
    expect(await admin.get(`dlock:{${key}}:fence`)).toBe(value);
  }
});

test('dlock history names a history key of the wrong type (69)', async () => {
  cli('SET', 'dlock:{wrong-history}:history', 'x');
  const result = await dlock(['history', '--redis', server.url, 'wrong-history']);
  expectOneError(result, 69, /: the key dlock:\{wrong-history\}:history holds a string, not dlock's history/);
});

test('a release that fails on a wrong-typed line deleted nothing: the lock is still there, as it says', async () => {
  const line = 'dlock:{k3}:line';
  const breakLine = ['redis-cli', '-p', String(server.port), 'SET', line, 'x'];
  const result = await dlock(['run', '--ttl', '10s', '--redis', server.url, 'k3', '--', ...breakLine]);
  const named = /^dlock: could not release k3 on redis:\/\/[\d.:]+: the key dlock:\{k3\}:line holds a string, not/;
  expect(result.stderr).toMatch(named);
  expect(result.stderr).toMatch(/ \(it expires by itself within [\d.]+s\)\n$/);
  expect(await admin.hget('dlock:{k3}', 'owner')).toMatch(/^[0-9a-f]{32}$/);
  expect(await admin.pttl('dlock:{k3}')).toBeGreaterThan(5000);
  await admin.del('dlock:{k3}', line);
});

test('release --force --now of a held lock with a wrong-typed line: 69 naming the line, holder kept', async () => {
  const owner = 'f'.repeat(32);
  const fields = ['fence', '1', 'host', 'h', 'pid', '1', 'cmd', 'c', 'since_ms', '0', 'ttl_ms', '60000'];
  await admin.hset('dlock:{k4}', 'owner', owner, ...fields);
  await admin.pexpire('dlock:{k4}', 60_000);
  cli('SET', 'dlock:{k4}:line', 'x');
  const before = await snapshot('k4');
  const result = await dlock(['release', '--force', '--now', '--redis', server.url, 'k4']);
  expectOneError(result, 69, /: the key dlock:\{k4\}:line holds a string, not dlock's line of waiters/);
  expect(await snapshot('k4')).toEqual(before);
});
