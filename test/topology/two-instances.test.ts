// Two Redis URLs (two --redis, or DLOCK_REDIS_URL with a comma) make a Redlock quorum of 2,
// which needs both: dlock says so instead of taking it silently.

import { afterAll, beforeAll, expect, test } from 'vitest';
import { startServers, type RedisServer } from '../../support/redis-server.mjs';
import { cleanEnv, dlock } from '../helpers/cli.js';

let servers: RedisServer[];
beforeAll(async () => {
  servers = await startServers(2);
});
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
});

const WARNING = new RegExp(
  '^dlock: pair: 2 Redis instances make a Redlock quorum that needs both of them ' +
    '\\(no fault tolerance: either one down makes dlock fail\\); use one URL, or three or more\n$',
);

test('two --redis, or two comma-separated URLs: one warning line, and the lock works', async () => {
  const flags = servers.flatMap((server) => ['--redis', server.url]);
  const fromFlags = await dlock(['run', ...flags, 'pair', '--', 'true']);
  expect(fromFlags.code, fromFlags.stderr).toBe(0);
  expect(fromFlags.stderr).toMatch(WARNING);
  const env = cleanEnv({ DLOCK_REDIS_URL: servers.map((server) => server.url).join(',') });
  const fromEnv = await dlock(['run', 'pair', '--', 'true'], { env });
  expect(fromEnv.code, fromEnv.stderr).toBe(0);
  expect(fromEnv.stderr).toMatch(WARNING);
});

test('-q silences it; json makes it a warning event; one URL has none', async () => {
  const flags = servers.flatMap((server) => ['--redis', server.url]);
  expect(await dlock(['run', '-q', ...flags, 'pair', '--', 'true'])).toMatchObject({ code: 0, stderr: '' });
  const json = await dlock(['run', '--log-format', 'json', ...flags, 'pair', '--', 'true']);
  expect(JSON.parse(json.stderr.split('\n')[0]!)).toMatchObject({ event: 'warning', key: 'pair', instances: 2 });
  expect(await dlock(['run', '--redis', servers[0]!.url, 'pair', '--', 'true'])).toMatchObject({ code: 0, stderr: '' });
});
