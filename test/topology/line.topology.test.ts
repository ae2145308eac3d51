// The line on a Cluster and on a Sentinel-managed master (docs/reference/waiting-in-line.md): waiters
// served in arrival order there too, by --priority first, and --supersede leaves only the newest such
// waiter in line. Kept short: 3 waiters each.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { hold, killLeftovers, removeTempDirs, tempDir } from '../fixtures/observe.js';
import { eventOf, inLine, runIn } from '../helpers/line.js';
import { ClusterTopology, SentinelTopology } from '../helpers/topology.js';

afterEach(killLeftovers);
afterAll(removeTempDirs);

/** Hold `key`, queue 3 waiters one after another, release: they run in that order, fences in that order. */
async function threeInOrder(url: string, key: string, server: Redis): Promise<void> {
  const file = join(tempDir(), 'order');
  const holder = hold(key, { redis: url });
  await holder.child();
  const waiters = [];
  for (const index of [0, 1, 2]) {
    const waiter = runIn(url, key, [], ['sh', '-c', `echo ${index} >>${file}`]);
    expect((await inLine(waiter)).place, waiter.stderr()).toBe(index + 1);
    waiters.push(waiter);
  }
  // The line lives with the lock, on the server that holds its keys.
  expect(await server.zcard(`dlock:{${key}}:line`)).toBe(3);
  holder.stop();
  expect((await holder.result).code).toBe(0);
  const results = await Promise.all(waiters.map((w) => w.result));
  expect(results.map((r) => r.code)).toEqual([0, 0, 0]);
  expect(readFileSync(file, 'utf8')).toBe('0\n1\n2\n');
  const fences = results.map((r) => BigInt(eventOf(r, 'acquired').fence!));
  expect(fences[1]).toBeGreaterThan(fences[0]);
  expect(fences[2]).toBeGreaterThan(fences[1]);
  // Each is woken by the release before it (its own wake channel), not by its next poll.
  const handovers = [1, 2].map(
    (i) => eventOf(results[i], 'acquired').ts_ms - eventOf(results[i - 1], 'released').ts_ms,
  );
  console.log(`${url.split(':')[0]}: hand-overs ${handovers.map((g) => `${g.toFixed(1)}ms`).join(', ')}`);
  for (const gap of handovers) expect(gap).toBeLessThan(1_000);
  expect(await server.exists(`dlock:{${key}}`, `dlock:{${key}}:line`)).toBe(0);
}

/** Hold `key`; a --supersede waiter, a newer --supersede one at priority 0, one at priority 9: 9 runs first, then the newer. */
async function priorityAndSupersede(url: string, key: string): Promise<void> {
  const file = join(tempDir(), 'order');
  const holder = hold(key, { redis: url });
  await holder.child();
  const waiter = (label: string, flags: string[]) => runIn(url, key, flags, ['sh', '-c', `echo ${label} >>${file}`]);
  const older = waiter('older', ['--supersede']);
  await inLine(older);
  const newer = waiter('newer', ['--supersede']);
  await inLine(newer);
  expect((await older.result).code).toBe(75);
  const urgent = waiter('urgent', ['--priority', '9']);
  expect((await inLine(urgent)).place).toBe(1);
  holder.stop();
  const results = await Promise.all([holder.result, urgent.result, newer.result]);
  expect(results.map((r) => r.code)).toEqual([0, 0, 0]);
  expect(readFileSync(file, 'utf8')).toBe('urgent\nnewer\n');
}

describe('a 3-master Cluster', () => {
  let cluster: ClusterTopology;
  beforeAll(async () => {
    cluster = await ClusterTopology.start({ primaries: 3 });
  }, 60_000);
  afterAll(() => cluster?.close());

  test('3 waiters run in arrival order', async () => {
    const key = 'line-cluster';
    await threeInOrder(cluster.url(), key, cluster.client(await cluster.primaryOf(`dlock:{${key}}`)));
  });

  test('--priority first, and --supersede leaves only the newest such waiter', async () => {
    await priorityAndSupersede(cluster.url(), 'queue-cluster');
  });
});

describe('a Sentinel-managed master', () => {
  let topology: SentinelTopology;
  beforeAll(async () => {
    topology = await SentinelTopology.start();
  }, 60_000);
  afterAll(() => topology?.close());

  test('3 waiters run in arrival order', async () => {
    await threeInOrder(topology.url(), 'line-sentinel', topology.data.client(topology.data.primary));
  });

  test('--priority first, and --supersede leaves only the newest such waiter', async () => {
    await priorityAndSupersede(topology.url(), 'queue-sentinel');
  });
});
