import { afterAll, beforeAll, expect, test } from 'vitest';
import { dlock } from '../helpers/cli.js';
import { RedisServer } from '../../support/redis-server.mjs';

let redis: RedisServer;
beforeAll(async () => {
  redis = await RedisServer.start();
});
afterAll(() => redis.close());

test('runs the child under the lock and passes its exit code through', async () => {
  const result = await dlock([
    'run',
    '--redis',
    redis.url,
    'smoke',
    '--',
    'sh',
    '-c',
    'echo "$DLOCK_KEY $DLOCK_FENCING_TOKEN"; exit 7',
  ]);
  expect(result.code).toBe(7);
  expect(result.stdout).toBe('smoke 1\n');
  expect(await redis.client().exists('dlock:{smoke}')).toBe(0);
});
