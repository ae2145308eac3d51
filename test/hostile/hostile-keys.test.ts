// Keys that look like globs, Redis commands, Lua or shell are stored literally and found
// exactly; keys with whitespace or control characters are refused. `status` without a key
// (SCAN MATCH with an escaped prefix) is not confused by glob characters in prefix or keys.

import { existsSync } from 'node:fs';
import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { lockKeys, lockPattern } from '../../src/backends/redis/lock/keys.js';
import { cleanEnv, DLOCK, dlock, start, type Running } from '../helpers/cli.js';
import { expectOneError } from '../helpers/hostile.js';
import { RedisServer } from '../../support/redis-server.mjs';

let redis: RedisServer;
let admin: Redis;
beforeAll(async () => {
  redis = await RedisServer.start();
  admin = redis.client();
});
afterAll(() => redis.close());

/** Every key in the database (the test's own server, so SCAN sees only what dlock and the test wrote). */
async function allKeys(): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await admin.scan(cursor, 'COUNT', 1000);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0');
  return keys.sort();
}

/** Hold each [prefix, key] with a child that sleeps until killed; resolves once all are acquired. */
async function holdAll(locks: [string, string][]): Promise<Running[]> {
  const holders = locks.map(([prefix, key]) =>
    start(['run', '--redis', redis.url, '--prefix', prefix, '--log-format', 'json', '--', key, '--', 'sleep', '60']),
  );
  const acquired = await Promise.allSettled(holders.map((holder) => holder.waitFor('"acquired"')));
  const failed = acquired.find((result) => result.status === 'rejected');
  if (failed) {
    for (const holder of holders) holder.process.kill('SIGTERM');
    throw (failed as PromiseRejectedResult).reason;
  }
  return holders;
}

async function releaseAll(holders: Running[]): Promise<void> {
  for (const holder of holders) holder.process.kill('SIGTERM');
  for (const holder of holders) expect((await holder.result).code).toBe(143);
}

const LITERAL_KEYS = [
  '*',
  '?',
  '[a]',
  '[!a]',
  '[a-z]',
  'a',
  '\\',
  '\\*',
  'a*',
  'FLUSHALL',
  'DEL',
  "x')redis.call('flushall')--",
  '";FLUSHALL;"',
  '$(touch$IFS/tmp/pwned)',
  '`id`',
  '-n',
  '--',
  '--help',
  '%s%n',
  '$HOME',
  '../../etc/passwd',
  'a\\nb',
  'ключ',
  '🔒',
  'a:b:c',
  ':fence',
  ':released',
];

describe('keys are stored literally', () => {
  test('globs, commands, Lua and shell syntax: each lock is its own, listed exactly', async () => {
    await admin.set('sentinel', 'still here');
    await admin.hset('dlock:{not-a-lock', 'owner', 'x'); // a hash that only looks like ours
    const holders = await holdAll(LITERAL_KEYS.map((key) => ['dlock:', key]));
    try {
      // Each key has exactly its hash, fence counter, history and totals under the prefix, and nothing else moved.
      const expected = LITERAL_KEYS.flatMap((key) => [
        lockKeys('dlock:', key).lock,
        lockKeys('dlock:', key).fence,
        lockKeys('dlock:', key).history,
        lockKeys('dlock:', key).totals,
      ]);
      expect(await allKeys()).toEqual([...expected, 'sentinel', 'dlock:{not-a-lock'].sort());
      expect(await admin.get('sentinel')).toBe('still here');
      expect(existsSync('/tmp/pwned')).toBe(false);

      // The list (SCAN MATCH) shows every key once, as given.
      const list = await dlock(['status', '--json', '--redis', redis.url]);
      expect(list.code).toBe(0);
      const rows = JSON.parse(list.stdout) as { key: string; pid: number }[];
      expect(rows.map((row) => row.key).sort()).toEqual([...LITERAL_KEYS].sort());

      // status <glob> shows that key's holder, not another one the glob would match.
      const statuses = await Promise.all(
        LITERAL_KEYS.map((key) => dlock(['status', '--json', '--redis', redis.url, '--', key])),
      );
      for (const [i, key] of LITERAL_KEYS.entries()) {
        const status = statuses[i];
        expect(status.code, `${key}: ${status.stderr}`).toBe(0);
        const shown = JSON.parse(status.stdout);
        expect(shown.key).toBe(key);
        expect(rows.find((row) => row.key === key)!.pid).toBe(shown.holder.pid);
        expect(shown.holder.cmd).toBe('sleep 60');
        expect(shown.holder.fence).toBe('1');
      }
    } finally {
      await releaseAll(holders);
    }
    const after = await dlock(['status', '--json', '--redis', redis.url]);
    expect(after.code).toBe(1);
    expect(JSON.parse(after.stdout)).toEqual([]);
  });

  test('whitespace, control characters, braces and RESP are refused before Redis is touched', async () => {
    const before = await allKeys();
    const refused = [
      'a\nb',
      'a b',
      'a\tb',
      '*\r\n*1\r\n$8\r\nFLUSHALL\r\n',
      '{a}',
      'a}b',
      '\x1b[31mred',
      'rtl\u202eevil',
      'nbsp\u00a0x',
      'x'.repeat(257),
    ];
    for (const key of refused) {
      expectOneError(await dlock(['run', '--redis', redis.url, '--', key, '--', 'true']), 64, /^dlock: key: /);
      expectOneError(await dlock(['status', '--redis', redis.url, '--', key]), 64, /^dlock: key: /);
    }
    expect(await allKeys()).toEqual(before);
  });

  test('property: a valid key round-trips exactly through run, the child env and status --json', async () => {
    const keyChar = fc.oneof(
      fc.constantFrom(...'*?[]^!\\\'"`$();|&<>~#%@:/.,=+-_'),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
    );
    const validKey = fc
      .string({ unit: keyChar, minLength: 1, maxLength: 30 })
      .filter((k) => Buffer.byteLength(k) <= 256 && !/[\s\p{C}\p{Z}{}]/u.test(k));
    // The child asks dlock for the status of the key it was handed, while it holds the lock.
    const child = `
      const { execFileSync } = require('node:child_process');
      const out = execFileSync(process.argv[1], ['status', '--json', '--redis', process.argv[2], '--', process.env.DLOCK_KEY]);
      process.stdout.write(JSON.stringify({ env: process.env.DLOCK_KEY, status: JSON.parse(out) }));`;
    let run = 0;
    await fc.assert(
      fc.asyncProperty(validKey, async (key) => {
        const prefix = `p${run++}:`;
        const result = await dlock(
          [
            'run',
            '--redis',
            redis.url,
            '--prefix',
            prefix,
            '--',
            key,
            '--',
            process.execPath,
            '-e',
            child,
            DLOCK,
            `${redis.url}`,
          ],
          {
            env: cleanEnv({ DLOCK_PREFIX: prefix }),
          },
        );
        expect(result.code, result.stderr).toBe(0);
        const seen = JSON.parse(result.stdout);
        expect(seen.env).toBe(key);
        expect(seen.status).toMatchObject({ key, held: true, holder: { fence: '1' } });
        // Released, and the fence counter stays at the name dlock gave it.
        expect(await admin.exists(lockKeys(prefix, key).lock)).toBe(0);
        expect(await admin.get(lockKeys(prefix, key).fence)).toBe('1');
      }),
      { numRuns: 10 },
    );
  });
});

describe('status without a key: SCAN MATCH with an escaped prefix', () => {
  test('glob characters in prefixes list only their own locks', async () => {
    const prefixes = ['p*', 'p?', 'p[x]', 'p[', 'p\\', 'p\\*', 'px', 'p', 'p]'];
    const holders = await holdAll(prefixes.map((prefix) => [prefix, 'k']));
    try {
      for (const [i, prefix] of prefixes.entries()) {
        const list = await dlock(['status', '--json', '--redis', redis.url, '--prefix', prefix]);
        expect(list.code, list.stderr).toBe(0);
        expect(JSON.parse(list.stdout)).toEqual([expect.objectContaining({ key: 'k', pid: holders[i].process.pid })]);
      }
      const text = await dlock(['status', '--redis', redis.url, '--prefix', 'p*']);
      expect(text.stdout.split('\n').filter((line) => line.startsWith('k '))).toHaveLength(1);
    } finally {
      await releaseAll(holders);
    }
  });

  test('property: lockPattern matches exactly the lock hashes of its prefix (real SCAN)', async () => {
    const globChar = fc.constantFrom(...'*?[]\\^-!ab:');
    const prefix = fc.string({ unit: globChar, maxLength: 6 });
    const key = fc.string({ unit: globChar, minLength: 1, maxLength: 4 });
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(prefix, { minLength: 2, maxLength: 4 }),
        fc.array(key, { minLength: 1, maxLength: 3 }),
        async (prefixes, keys) => {
          await admin.flushall();
          for (const p of prefixes) for (const k of keys) await admin.hset(lockKeys(p, k).lock, 'owner', 'o');
          for (const p of prefixes) {
            const [cursor, found] = await admin.scan('0', 'MATCH', lockPattern(p), 'COUNT', 10_000, 'TYPE', 'hash');
            expect(cursor).toBe('0');
            expect(found.sort()).toEqual([...new Set(keys)].map((k) => lockKeys(p, k).lock).sort());
          }
        },
      ),
      { numRuns: 200 },
    );
    await admin.flushall();
  });
});
