// dlock hold / unhold on a Cluster and a Sentinel-managed master (issue 35): the hold's fields live in the lock's
// hash on the server holding its keys, a --wait run queued behind it starts once it is unheld.

import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { cleanEnv, dlock, start } from '../helpers/cli.js';
import { killLeftovers, removeTempDirs } from '../fixtures/observe.js';
import { ClusterTopology, SentinelTopology } from '../helpers/topology.js';

afterEach(killLeftovers);
afterAll(removeTempDirs);

async function holdThenUnhold(url: string, key: string): Promise<void> {
  const held = await dlock(['hold', '--redis', url, '--reason', 'freeze', '--for', '10m', key]);
  expect(held.code, held.stderr).toBe(0);
  const status = JSON.parse((await dlock(['status', '--json', '--redis', url, key])).stdout);
  expect(status.holder).toMatchObject({ hold: true, reason: 'freeze', pid: null });
  const run = start(['run', '--redis', url, '--log-format', 'json', '--reason', 'deploy', key, '--', 'true'], {
    env: cleanEnv(),
  });
  await run.waitFor('"event":"waiting"');
  const line = JSON.parse((await dlock(['status', '--json', '--redis', url, key])).stdout).line;
  expect(line[0]).toMatchObject({ reason: 'deploy' });
  expect((await dlock(['unhold', '--redis', url, key])).code).toBe(0);
  expect((await run.result).code).toBe(0);
  const history = JSON.parse((await dlock(['history', '--json', '--redis', url, key])).stdout);
  expect(history.find((e: { event: string; hold?: boolean }) => e.event === 'acquired' && e.hold)).toMatchObject({
    reason: 'freeze',
  });
}

describe('a 3-master Cluster', () => {
  let cluster: ClusterTopology;
  beforeAll(async () => {
    cluster = await ClusterTopology.start({ primaries: 3 });
  }, 60_000);
  afterAll(() => cluster?.close());

  test('a hold blocks a --wait run until unhold', () => holdThenUnhold(cluster.url(), 'hold-cluster'));
});

describe('a Sentinel-managed master', () => {
  let topology: SentinelTopology;
  beforeAll(async () => {
    topology = await SentinelTopology.start();
  }, 60_000);
  afterAll(() => topology?.close());

  test('a hold blocks a --wait run until unhold', () => holdThenUnhold(topology.url(), 'hold-sentinel'));
});
