// dlock __complete-keys, which the completion scripts call at a lock-name position: the names
// under the configured prefix from a real redis-server, and nothing at all (no output, no
// error) when Redis is down, stalled or not dlock's.

import { performance } from 'node:perf_hooks';
import { expect, test } from 'vitest';
import type { RedisServer } from '../../support/redis-server.mjs';
import { cleanEnv, dlock } from '../helpers/cli.js';
import { useRedisServer } from '../helpers/server.js';

let server: RedisServer;
useRedisServer((started) => (server = started));

const keys = (prefix: string, env: Record<string, string> = {}) =>
  dlock(['__complete-keys', '--', prefix], { env: cleanEnv({ DLOCK_REDIS_URL: server.url, ...env }) });

test('lists the held locks whose names start with the word typed, from DLOCK_REDIS_URL and DLOCK_PREFIX', async () => {
  for (const key of ['deploy-prod', 'deploy-staging', 'nightly']) {
    expect((await dlock(['acquire', '--redis', server.url, '--no-keeper', '--ttl', '1m', key])).code).toBe(0);
  }
  const other = ['acquire', '--redis', server.url, '--prefix', 'other:', '--no-keeper', 'deploy-other'];
  expect((await dlock(other)).code).toBe(0);
  expect(await keys('deploy')).toEqual({ code: 0, signal: null, stdout: 'deploy-prod\ndeploy-staging\n', stderr: '' });
  expect((await keys('')).stdout).toBe('deploy-prod\ndeploy-staging\nnightly\n');
  expect((await keys('', { DLOCK_PREFIX: 'other:' })).stdout).toBe('deploy-other\n');
});

test('the word typed is matched literally, and a name no shell line can hold is left out', async () => {
  const client = server.client();
  await client.hset('dlock:{glob*x}', 'owner', 'o');
  await client.hset('dlock:{globby}', 'owner', 'o');
  await client.hset('dlock:{glob\nrm -rf ~}', 'owner', 'o');
  expect((await keys('glob*')).stdout).toBe('glob*x\n');
  expect((await keys('glob')).stdout).toBe('glob*x\nglobby\n');
});

test('a stalled server: nothing printed, and dlock gives up after 200 ms, not --connect-timeout (5 s)', async () => {
  server.pause();
  try {
    const started = performance.now();
    const result = await keys('');
    const took = performance.now() - started;
    expect(result).toEqual({ code: 1, signal: null, stdout: '', stderr: '' });
    // node's own start-up on a loaded machine is in this too; 5 s is what a bound of its own would miss.
    expect(took).toBeLessThan(2_000);
  } finally {
    server.resume();
  }
});

test('no server, or settings dlock would refuse: nothing printed, no error', async () => {
  const refused = { DLOCK_REDIS_URL: 'redis://127.0.0.1:1' };
  expect(await keys('', refused)).toEqual({ code: 1, signal: null, stdout: '', stderr: '' });
  expect(await keys('', { DLOCK_PREFIX: 'has space' })).toEqual({ code: 1, signal: null, stdout: '', stderr: '' });
  expect(await keys('', { DLOCK_REDIS_URL: 'http://nope' })).toEqual({ code: 1, signal: null, stdout: '', stderr: '' });
});
