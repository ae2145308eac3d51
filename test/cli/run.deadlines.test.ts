// Deadlines that hold on a slow link and a stalled dlock (docs/guarantees.md): a renewal
// may take as long as the lease has left (not ttl/10), and when dlock's own event loop was
// stalled past the moment the child had to be gone, the child is SIGKILLed at once and dlock
// says so. Redis is reached through support/tcp-proxy.mjs.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { schedulingMarginMs } from '../../src/timing.js';
import {
  childPid,
  events,
  hold,
  killLeftovers,
  onlyEvent,
  removeTempDirs,
  signalsSeen,
  tempDir,
  waitForDeath,
} from '../fixtures/observe.js';
import { TcpProxy } from '../../support/tcp-proxy.mjs';
import { RedisServer } from '../../support/redis-server.mjs';
import { waitForEvents, waitForMoreEvents } from '../helpers/redlock.js';

let redis: RedisServer;
let proxy: TcpProxy;
beforeAll(async () => {
  redis = await RedisServer.start();
  proxy = await TcpProxy.start(redis.port);
});
afterEach(() => {
  killLeftovers();
  proxy.delay(0);
  proxy.resume();
});
afterAll(async () => {
  await proxy.close();
  await redis.close();
  removeTempDirs();
});

test('every reply 250ms late at ttl 2s: renewals still succeed, the job ends 0', async () => {
  // Later than ttl/10 (200ms): a renewal may take what the lease has left. (At ttl 1s and 150ms
  // late, a loaded machine could spend the whole lease on connecting and the first acquire.)
  proxy.delay(250);
  const dir = tempDir();
  const holder = hold('slow-link', { redis: proxy.url, dir, flags: ['-t', '2s'] });
  await childPid(dir);
  // Four renewals: longer than 1 TTL past the acquisition, every one answered 250ms late.
  await waitForEvents(holder, 'renewed', 4);
  writeFileSync(join(dir, 'stop'), '');
  const result = await holder.result;
  expect(result.code, result.stderr).toBe(0);
  expect(events(result.stderr, 'lost')).toEqual([]);
  expect(events(result.stderr, 'renew-failed')).toEqual([]);
  expect(onlyEvent(result.stderr, 'released').released).toBe(true);
});

test('dlock stalled (SIGSTOP) across the moment its child must be gone: SIGKILL at once, and it says so', async () => {
  const ttl = 1_000;
  const dir = tempDir();
  const holder = hold('stalled', { redis: proxy.url, dir, flags: ['-t', `${ttl}ms`, '--kill-after', '100ms'] });
  const pid = await childPid(dir);
  await waitForMoreEvents(holder, 'renewed', 1);
  const renewedAt = events(holder.stderr(), 'renewed').at(-1)!.ts_ms;
  // Renewals now hang; the lease gives up at about renewed + ttl - drift - margin - grace.
  proxy.stall();
  const givesUpAt = renewedAt + ttl - 12 - schedulingMarginMs(ttl) - 100;
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, givesUpAt - 190 - Date.now())));
  holder.process.kill('SIGSTOP');
  const stoppedAt = Date.now();
  await new Promise((resolve) => setTimeout(resolve, 350));
  holder.process.kill('SIGCONT');
  const continuedAt = Date.now();
  const diedAt = await waitForDeath(pid);
  const result = await holder.result;
  console.log(
    `dlock stopped ${stoppedAt - renewedAt}-${continuedAt - renewedAt}ms after the last renewal; child gone ${diedAt - continuedAt}ms after SIGCONT`,
  );

  expect(result.code, result.stderr).toBe(76);
  const stalled = onlyEvent(result.stderr, 'stalled');
  expect(stalled.late_ms).toBeGreaterThan(0);
  expect(stalled.message).toMatch(/dlock itself was stalled: its deadline timer fired \d+ms late/);
  expect(onlyEvent(result.stderr, 'lost')).toMatchObject({ reason: 'expiring' });
  expect(events(result.stderr, 'signal').map((e) => [e.signal, e.reason])).toEqual([['SIGKILL', 'lost']]);
  // No SIGTERM first: there was no time left for a grace.
  expect(signalsSeen(dir)).toEqual([]);
  expect(diedAt - continuedAt).toBeLessThan(500);
});
