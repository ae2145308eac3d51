// --sync-replicas <n>: after acquiring, WAIT until n replicas have the lock and its fence;
// when fewer acknowledge in time, release and fail with 69 without running the child.
// Real primaries with real replicas on loopback; a replica is stopped or paused to lag.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { events, killLeftovers, onlyEvent, removeTempDirs, spawnDlock, tempDir } from '../fixtures/observe.js';
import { dlock } from '../helpers/cli.js';
import { errorLines, expectOneError } from '../helpers/hostile.js';
import { startServers, type RedisServer } from '../../support/redis-server.mjs';
import { redisFlags } from '../helpers/redlock.js';
import { Replicated } from '../helpers/topology.js';
import { waitUntil } from '../../support/wait-until.mjs';

afterEach(killLeftovers);
afterAll(removeTempDirs);

/** A child that records that it ran, and what the replica at `replicaPort` had of the fence then. */
function recordingChild(dir: string, replicaPort: number, key: string): string[] {
  return [
    'sh',
    '-c',
    `date +%s%3N >"${dir}/started"; redis-cli -p ${replicaPort} GET "dlock:{${key}}:fence" >"${dir}/replica-fence"`,
  ];
}

describe('a primary with one replica', () => {
  let topology: Replicated;
  beforeAll(async () => {
    topology = await Replicated.start({ replicas: 1 });
  });
  afterAll(() => topology.close());

  test('--sync-replicas 1: the child starts only once the replica has the fence', async () => {
    const [replica] = topology.replicas;
    const dir = tempDir();
    // The replica hangs (SIGSTOP): the WAIT cannot be answered until it is resumed.
    let resumingAt = Infinity;
    replica.pause();
    const run = spawnDlock([
      'run',
      '--redis',
      topology.primary.url,
      '--sync-replicas',
      '1',
      '--connect-timeout',
      '5s',
      '--log-format',
      'json',
      'synced',
      '--',
      ...recordingChild(dir, replica.port, 'synced'),
    ]);
    try {
      await run.waitFor('"event":"acquired"');
      // Acquired, then blocked in WAIT on the primary: the child must not have started.
      const primary = topology.client(topology.primary);
      await waitUntil('dlock to block in WAIT', async () =>
        /blocked_clients:1\r\n/.test(await primary.info('clients')),
      );
      expect(existsSync(join(dir, 'started'))).toBe(false);
    } finally {
      // Read before the SIGCONT: the replica cannot have acknowledged anything earlier.
      resumingAt = Date.now();
      replica.resume();
    }
    const result = await run.result;
    expect(result.code, result.stderr).toBe(0);
    const fence = onlyEvent(result.stderr, 'acquired').fence;
    // The child's own clock reading at its start (same machine clock, ms).
    expect(Number(readFileSync(join(dir, 'started'), 'utf8'))).toBeGreaterThanOrEqual(resumingAt);
    expect(readFileSync(join(dir, 'replica-fence'), 'utf8').trim()).toBe(fence);
  });

  test.each(['stopped', 'paused'] as const)(
    'the replica is %s: 69, the lock released, the child never ran',
    async (fault) => {
      const [replica] = topology.replicas;
      const dir = tempDir();
      const client = topology.client(topology.primary);
      if (fault === 'stopped') await replica.stop();
      else replica.pause();
      try {
        const started = Date.now();
        const result = await dlock([
          'run',
          '--redis',
          topology.primary.url,
          '--sync-replicas',
          '1',
          '--connect-timeout',
          '400ms',
          '--log-format',
          'json',
          `lag-${fault}`,
          '--',
          'touch',
          join(dir, 'ran'),
        ]);
        console.log(`replica ${fault}: 69 after ${Date.now() - started}ms (WAIT timeout 400ms)`);
        expect(result.code, result.stderr).toBe(69);
        expect(errorLines(result.stderr).at(-1)).toMatch(
          new RegExp(
            `^dlock: --sync-replicas 1: too few replicas acknowledged the lock within 400ms \\(redis://127\\.0\\.0\\.1:${topology.primary.port}: 0 of 1\\); released it without running the command$`,
          ),
        );
        expect(onlyEvent(result.stderr, 'released')).toMatchObject({ released: true });
        expect(existsSync(join(dir, 'ran'))).toBe(false);
        expect(await client.exists(`dlock:{lag-${fault}}`)).toBe(0);
      } finally {
        replica.resume();
        if (fault === 'stopped') {
          await replica.restart();
          await topology.waitForLink(replica);
        }
      }
      // With the replica back, the same run goes through.
      const again = await dlock([
        'run',
        '--redis',
        topology.primary.url,
        '--sync-replicas',
        '1',
        `lag-${fault}`,
        '--',
        'true',
      ]);
      expect(again.code, again.stderr).toBe(0);
    },
  );

  test('more replicas asked for than there are: 69', async () => {
    const result = await dlock([
      'run',
      '--redis',
      topology.primary.url,
      '--sync-replicas',
      '2',
      '--connect-timeout',
      '300ms',
      'two',
      '--',
      'true',
    ]);
    expectOneError(
      result,
      69,
      /^dlock: --sync-replicas 2: too few replicas acknowledged the lock within 300ms \(redis:\/\/127\.0\.0\.1:\d+: 1 of 2\)/,
    );
  });
});

describe('Redlock: WAIT on every instance, a quorum of them must be acknowledged', () => {
  let withReplica: Replicated[];
  let bare: RedisServer[];
  beforeAll(async () => {
    withReplica = await Promise.all([Replicated.start(), Replicated.start()]);
    bare = await startServers(2);
  });
  afterAll(async () => {
    await Promise.all(withReplica.map((t) => t.close()));
    await Promise.all(bare.map((s) => s.close()));
  });

  test('2 of 3 instances replicated: acquired; 1 of 3: 69 and released everywhere', async () => {
    const majority = [withReplica[0].primary, withReplica[1].primary, bare[0]];
    const ok = await dlock([
      'run',
      ...redisFlags(majority),
      '--sync-replicas',
      '1',
      '--connect-timeout',
      '300ms',
      '--log-format',
      'json',
      'rl',
      '--',
      'true',
    ]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(events(ok.stderr, 'released')).toHaveLength(1);

    const minority = [withReplica[0].primary, bare[0], bare[1]];
    const dir = tempDir();
    const short = await dlock([
      'run',
      ...redisFlags(minority),
      '--sync-replicas',
      '1',
      '--connect-timeout',
      '300ms',
      'rl',
      '--',
      'touch',
      join(dir, 'ran'),
    ]);
    expectOneError(
      short,
      69,
      /^dlock: --sync-replicas 1: too few replicas acknowledged the lock within 300ms \(redis:\/\/127\.0\.0\.1:\d+: 1 of 1; redis:\/\/127\.0\.0\.1:\d+: 0 of 1; redis:\/\/127\.0\.0\.1:\d+: 0 of 1\)/,
    );
    expect(existsSync(join(dir, 'ran'))).toBe(false);
    for (const server of minority) expect(await server.client().exists('dlock:{rl}')).toBe(0);
  });
});
