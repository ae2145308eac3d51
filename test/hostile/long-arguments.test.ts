// Every argument goes through dlock's masking, checks and message building at start-up, so
// their time must grow with the arguments' length only: a 100 kB argument (Linux takes up to
// 128 kB in one) costs well under 2 s, where a backtracking regex took 10-30 s. Measured as
// the CPU time dlock used (time(1)), which a machine loaded by other work does not inflate.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import type { RedisServer } from '../../support/redis-server.mjs';
import { cleanEnv, dlock, type Result } from '../helpers/cli.js';
import { expectOneError } from '../helpers/hostile.js';
import { useRedisServer } from '../helpers/server.js';
import { tempDir } from '../fixtures/observe.js';

const LENGTH = 100_000;
/** Generous: dlock spends about 0.3 s of CPU on these, the quadratic code took 10 s and more. */
const BOUND_MS = 2000;

let server: RedisServer;
useRedisServer((started) => (server = started));

/** `args` run by bin/dlock, with the CPU time (user + system) it used, in ms. */
async function timed(args: string[], env: Record<string, string> = {}): Promise<Result & { ms: number }> {
  const report = join(tempDir(), 'time');
  const result = await dlock(args, { env: cleanEnv(env), via: ['/usr/bin/time', '-o', report, '-f', '%U %S'] });
  const [user, system] = readFileSync(report, 'utf8').trim().split('\n').at(-1)!.split(' ').map(Number);
  return { ...result, ms: (user + system) * 1000 };
}

const letters = 'a'.repeat(LENGTH);
const blanks = ' '.repeat(LENGTH);
/** Letters (a scheme that never ends), then a colon and an "@" every three characters. */
const mixed = 'a'.repeat(LENGTH / 2) + 'a:@'.repeat(LENGTH / 6);

describe(`a ${LENGTH / 1000} kB argument costs under ${BOUND_MS} ms of CPU`, () => {
  test.for([
    ['letters', letters],
    ['letters, then "a:@" repeated', mixed],
    ['a URL-like start, then letters', `redis://${letters}`],
  ])('run -n k -- true <%s>: the command runs, exit 0', async ([, arg]) => {
    const result = await timed(['run', '-n', '--redis', server.url, 'long', '--', 'true', arg]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.ms).toBeLessThan(BOUND_MS);
  });

  test.for([
    ['renew --token <letters>', ['renew', '--token', letters, 'k'], /^dlock: --token: /],
    ['an unknown option holding blanks', ['run', `--bogus=${blanks}x`, 'k', '--', 'true'], /^dlock: unknown option/],
    ['an option after the key holding blanks', ['run', 'k', `--x=${blanks}x`, '--', 'true'], /comes after the key/],
    ['an unknown option, letters then "a:@"', ['run', `--x=${mixed}`, 'k', '--', 'true'], /^dlock: unknown option/],
  ] as const)('%s: 64', async ([, args, message]) => {
    const result = await timed([...args]);
    expectOneError(result, 64, message);
    expect(result.ms).toBeLessThan(BOUND_MS);
  });

  test('DLOCK_REDIS_URL with blanks inside: 64', async () => {
    const result = await timed(['run', 'k', '--', 'true'], { DLOCK_REDIS_URL: `redis://h${blanks}x` });
    expectOneError(result, 64, /^dlock: DLOCK_REDIS_URL: /);
    expect(result.ms).toBeLessThan(BOUND_MS);
  });
});
