// Instances failing while the child runs: a Redlock lease lives on while a majority renews it,
// and is lost (76, child terminated before the lease runs out) when no majority can.

import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { quorumSize } from '../../src/backends/redis/quorum.js';
import {
  childPid,
  events,
  hold,
  isAlive,
  killLeftovers,
  signalsSeen,
  tempDir,
  waitForDeath,
} from '../fixtures/observe.js';
import { startServers, type RedisServer } from '../../support/redis-server.mjs';
import { fail, heal, waitForEvents, waitForMoreEvents, type Fault } from '../helpers/redlock.js';

const TTL_MS = 1_000;
const HOLD_FLAGS = ['-t', `${TTL_MS}ms`, '--kill-after', '200ms'];

let servers: RedisServer[];
let clients: Redis[];

beforeAll(async () => {
  servers = await startServers(5);
  clients = servers.map((server) => server.client());
});
afterEach(async () => {
  killLeftovers();
  await heal(servers);
});
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
});

describe.each<Fault>(['stop', 'pause'])('instances failing one by one while the child runs (%s)', (fault) => {
  test.each([5, 3])('%i instances: the lock survives while a majority is up, and is lost with it', async (n) => {
    const set = servers.slice(0, n);
    const dir = tempDir();
    const holder = hold(`one-by-one-${n}-${fault}`, { redis: set.map((s) => s.url), dir, flags: HOLD_FLAGS });
    await holder.waitFor('"event":"acquired"');
    const pid = await childPid(dir);

    const survivable = n - quorumSize(n);
    for (let down = 0; down < survivable; down++) {
      await fail(set[down], fault);
      // Two whole renewals after the failure, each one by a majority.
      await waitForMoreEvents(holder, 'renewed', 2);
      expect(events(holder.stderr(), 'lost')).toEqual([]);
      expect(isAlive(pid)).toBe(true);
    }

    await fail(set[survivable], fault);
    await waitForEvents(holder, 'lost', 1);
    const diedAt = await waitForDeath(pid);
    const result = await holder.result;
    expect(result.code, result.stderr).toBe(76);
    expect(signalsSeen(dir)).toEqual(['TERM']);
    // Stopped instances refuse connections at once: failed renewals are retried until the
    // lease gives up. Hung ones never answer: the renewal in flight waits that long (a retry
    // would queue behind it on the same connection), and the loss says so.
    if (fault === 'stop') expect(events(result.stderr, 'renew-failed').length).toBeGreaterThan(0);
    else expect(events(result.stderr, 'lost')[0].message).toMatch(/no quorum answered the renewal sent \d+ms ago/);
    expect(events(result.stderr, 'lost')[0]).toMatchObject({ reason: 'expiring' });
    expect(JSON.parse(result.stderr.trimEnd().split('\n').at(-1)!)).toMatchObject({
      event: 'error',
      exit_code: 76,
      message: expect.stringMatching(/^lost the lock one-by-one-\d-\w+ while the command ran: /),
    });

    // The child is gone before the lease could run out on the instances still up: it was last
    // renewed (by a quorum) at most at the "renewed" event, and lasts TTL from when it was sent.
    const lastRenewed = Date.parse(events(result.stderr, 'renewed').at(-1)!.ts);
    const lostAt = Date.parse(events(result.stderr, 'lost')[0].ts);
    console.log(
      `${n} instances, ${fault}: lost ${lostAt - lastRenewed}ms and child gone ${diedAt - lastRenewed}ms after the last renewal (ttl ${TTL_MS}ms)`,
    );
    expect(diedAt - lastRenewed).toBeLessThan(TTL_MS);
  });
});

test('a renewal refused by a majority is an immediate loss; by a minority it is not (the minority is re-taken)', async () => {
  const key = 'taken';
  const lock = `dlock:{${key}}`;
  const dir = tempDir();
  const holder = hold(key, { redis: servers.map((s) => s.url), dir, flags: HOLD_FLAGS });
  await holder.waitFor('"event":"acquired"');
  const pid = await childPid(dir);

  // Two instances forget the lock (an operator DEL, a restart without persistence): the
  // majority still holds it, so the next renewal puts it back there (test/topology/redlock-retake.test.ts).
  for (const i of [0, 1]) await clients[i].del(lock);
  await waitForEvents(holder, 'retaken', 1);
  await waitForMoreEvents(holder, 'renewed', 1);
  expect(events(holder.stderr(), 'lost')).toEqual([]);
  expect(await Promise.all([0, 1].map((i) => clients[i].exists(lock)))).toEqual([1, 1]);

  // A majority forgets it at once, right after a renewal: the next one is refused.
  await waitForMoreEvents(holder, 'renewed', 1);
  await Promise.all([0, 1, 2].map((i) => clients[i].del(lock)));
  await waitForEvents(holder, 'lost', 1);
  await waitForDeath(pid);
  const result = await holder.result;
  expect(result.code, result.stderr).toBe(76);
  expect(events(result.stderr, 'lost')[0]).toMatchObject({ reason: 'refused' });
  // Lost at the first renewal that found it gone, not at the deadline: no failed renewals first.
  expect(events(result.stderr, 'renew-failed')).toEqual([]);
  expect(signalsSeen(dir)).toEqual(['TERM']);
  // A refused renewal re-takes nothing, and its release touched nobody else's lock: the two
  // instances that still had it are cleared.
  expect(events(result.stderr, 'retaken')).toHaveLength(1);
  expect(await Promise.all(clients.map((client) => client.exists(lock)))).toEqual([0, 0, 0, 0, 0]);
});

describe.each<Fault>(['stop', 'pause'])('after a loss, dlock exits once its command has (%s)', (fault) => {
  // The lease's end bounds the release after a loss, not --connect-timeout (5s here): the
  // renewals have tried these servers until the lease gave up, and the lock frees itself then.
  test.each([3, 1])('%i instance(s), all failed: exit 76 within what was left of the lease', async (n) => {
    const set = servers.slice(0, n);
    const dir = tempDir();
    const flags = [...HOLD_FLAGS, '--connect-timeout', '5s'];
    const holder = hold(`exit-after-loss-${n}-${fault}`, { redis: set.map((s) => s.url), dir, flags });
    await holder.waitFor('"event":"acquired"');
    const pid = await childPid(dir);
    await Promise.all(set.map((server) => fail(server, fault)));
    await waitForEvents(holder, 'lost', 1);
    await waitForDeath(pid);
    const result = await holder.result;
    expect(result.code, result.stderr).toBe(76);
    expect(signalsSeen(dir)).toEqual(['TERM']);
    const lost = events(result.stderr, 'lost')[0];
    const exited = events(result.stderr, 'error').at(-1)!;
    // At the loss, grace (200ms) and scheduling margin (100ms) are left of the lease: the
    // command exits at once on SIGTERM, and one release attempt gets at most what is left.
    console.log(`${n} instance(s), ${fault}: exited ${Math.round(exited.ts_ms - lost.ts_ms)}ms after the loss`);
    expect(exited.ts_ms - lost.ts_ms).toBeLessThan(TTL_MS);
    // The release that could not be sent says so, and when the lock frees itself.
    const expires = /\(it expires by itself (within [\d.]+m?s|by now)\)$/;
    expect(events(result.stderr, 'release-failed')[0].message).toMatch(/^could not release exit-after-loss-\d-\w+ on /);
    expect(events(result.stderr, 'release-failed')[0].message).toMatch(expires);
  });
});
