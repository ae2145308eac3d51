// A wait that rides out an outage keeps its bound (docs/reference/commands.md): Redis restarted
// during the wait and slow to answer again (a restart still loading, here SIGSTOP) holds each
// attempt up to --connect-timeout, and the wait's end must not move with it. Real redis-server
// with an append-only file, so the holder's lock survives the restart; times from ts_ms.

import { expect, test } from 'vitest';
import { RedisServer } from '../../support/redis-server.mjs';
import { dlock } from '../helpers/cli.js';
import { events, spawnDlock } from '../fixtures/observe.js';
import { useRedisServer } from '../helpers/server.js';

let redis: RedisServer;
useRedisServer((server) => (redis = server), { persistence: 'aof-always' });

// Issue 31: `--wait 12s` ended 15.7 s after it started when Redis came back during an attempt,
// and the outage line ("unreachable for the last 11s") was printed after Redis answered.
test('Redis restarted but not answering when the wait runs out: it ends at --wait, not an attempt later', async () => {
  const key = 'outage-bound';
  const url = ['--redis', redis.url];
  const acquired = await dlock(['acquire', ...url, '--no-keeper', '--ttl', '2m', key]);
  expect(acquired.code, acquired.stderr).toBe(0);
  const waiter = spawnDlock(['run', ...url, '--log-format', 'json', '--wait', '6s', key, '--', 'true']);
  await waiter.waitFor('"event":"waiting"');
  const startedAt = Date.now();
  await redis.stop();
  // Back within the wait, but answering nothing until well after it (5 s of --connect-timeout).
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, 3_000 - (Date.now() - startedAt))));
  await redis.launch();
  redis.pause();
  const resume = setTimeout(() => redis.resume(), 9_000 - (Date.now() - startedAt));
  const result = await waiter.result.finally(() => clearTimeout(resume));
  redis.resume();

  expect(result.code, result.stderr).toBe(69);
  const [waiting] = events(result.stderr, 'waiting');
  const [error] = events(result.stderr, 'error');
  // The wait's bound, give or take the 250 ms an attempt is always allowed and a loaded machine.
  expect(error!.ts_ms - waiting!.ts_ms).toBeGreaterThanOrEqual(6_000);
  expect(error!.ts_ms - waiting!.ts_ms).toBeLessThan(6_000 + 1_000);
  // The line says the outage lasted until the wait ran out: it claims nothing about Redis now.
  expect(error!.message).toMatch(
    new RegExp(
      `^${key} not acquired within 6s: Redis was unreachable for the last [\\d.]+m?s of the wait, until it ran out \\(`,
    ),
  );
}, 30_000);
