// Redis Cluster (redis+cluster://): a lock's keys share one slot, so its scripts run on the
// master serving that slot; keys on every master, mutual exclusion and fencing per key,
// status listing every master, release --force, a waiter woken by the release channel, a
// slot moved to another master during a hold (ASK/MOVED), and --sync-replicas sent to the
// master that took the write. A real 3-master cluster (one master has a replica) on loopback.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { parseRedisUrl } from '../../src/backends/redis/client/url.js';
import {
  childEnv,
  CRITICAL,
  events,
  hold,
  killLeftovers,
  onlyEvent,
  removeTempDirs,
  spawnDlock,
  tempDir,
} from '../fixtures/observe.js';
import { cleanEnv, dlock as runDlock, type Result } from '../helpers/cli.js';
import { expectOneError } from '../helpers/hostile.js';
import { ConnectClock } from '../helpers/connect-clock.js';
import { freePort, RedisServer } from '../../support/redis-server.mjs';
import { waitForMoreEvents } from '../helpers/redlock.js';
import { ClusterTopology } from '../helpers/topology.js';

const PASSWORD = 'Clu5ter-pw-Wd';

function expectNoPassword(result: Result): Result {
  for (const secret of [PASSWORD, encodeURIComponent(PASSWORD)])
    expect(result.stdout + result.stderr).not.toContain(secret);
  return result;
}

/** dlock as a user runs it; no output of it may show the cluster's password. */
async function dlock(args: string[], options: { env?: NodeJS.ProcessEnv } = {}): Promise<Result> {
  return expectNoPassword(await runDlock(args, options));
}

describe('redis+cluster:// URLs (no server)', () => {
  test('seed nodes, user and password; the label hides the password', () => {
    const target = parseRedisUrl('redis+cluster://app:s3cret@n1:7000,n2,[::1]:7002', '--redis');
    expect(target).toMatchObject({
      kind: 'cluster',
      username: 'app',
      password: 's3cret',
      db: 0,
      nodes: [
        { host: 'n1', port: 7000 },
        { host: 'n2', port: 6379 },
        { host: '::1', port: 7002 },
      ],
    });
    expect(target.label).toBe('redis+cluster://app:***@n1:7000,n2:6379,[::1]:7002');
    expect(parseRedisUrl('redis+cluster://n1:7000/', '--redis').nodes).toHaveLength(1);
  });

  test.each([
    ['no hosts', 'redis+cluster://', /empty entry/],
    ['an empty host', 'redis+cluster://a:1,,b:2', /empty entry/],
    ['a bad port', 'redis+cluster://a:70000', /port of "a:70000"/],
    ['a database', 'redis+cluster://a:7000/2', /a cluster has only database 0/],
    ['TLS', 'rediss+cluster://a:7000', /TLS is not supported with Cluster/],
  ])('%s is a usage error naming the option, without the password', (_what, url, why) => {
    let error: unknown;
    try {
      parseRedisUrl(url.replace('://', '://u:Secr3t-Cl@'), 'DLOCK_REDIS_URL');
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).message).toMatch(/^DLOCK_REDIS_URL: /);
    expect((error as UsageError).message).toMatch(why);
    expect((error as UsageError).message).not.toContain('Secr3t-Cl');
  });
});

describe('a 3-master cluster with a password', () => {
  let cluster: ClusterTopology;
  let url: string;
  /** One key per master, each served by a different master (primaries[i] serves keys[i]). */
  let keys: string[];

  beforeAll(async () => {
    const startedAt = Date.now();
    cluster = await ClusterTopology.start({ primaries: 3, replicate: [0], password: PASSWORD });
    console.log(`cluster of 3 masters + 1 replica ready in ${Date.now() - startedAt}ms`);
    url = cluster.url();
    keys = [];
    for (const primary of cluster.primaries) {
      for (let i = 0; ; i++) {
        const key = `job-${i}`;
        if (keys.includes(key) || (await cluster.primaryOf(`dlock:{${key}}`)) !== primary) continue;
        keys.push(key);
        break;
      }
    }
  });
  afterEach(killLeftovers);
  afterAll(async () => {
    await cluster?.close();
    removeTempDirs();
  });

  test('mutual exclusion and increasing fences on keys served by each master', async () => {
    const dir = tempDir();
    const runs = keys.flatMap((key) =>
      Array.from({ length: 6 }, () =>
        dlock([
          'run',
          '--redis',
          url,
          '-t',
          '5s',
          key,
          '--',
          CRITICAL,
          join(dir, `${key}.count`),
          join(dir, `${key}.log`),
        ]),
      ),
    );
    const results = await Promise.all(runs);
    expect(results.map((r) => r.code)).toEqual(Array(runs.length).fill(0));
    for (const [i, key] of keys.entries()) {
      expect(readFileSync(join(dir, `${key}.count`), 'utf8').trim()).toBe('6');
      const sections = readFileSync(join(dir, `${key}.log`), 'utf8')
        .trim()
        .split('\n')
        .map((line) => line.split(' ').map(BigInt))
        .sort((a, b) => (a[0] < b[0] ? -1 : 1));
      for (let n = 1; n < sections.length; n++) {
        expect(sections[n][0]).toBeGreaterThan(sections[n - 1][1]);
        expect(sections[n][2]).toBeGreaterThan(sections[n - 1][2]);
      }
      // The lock's keys live on the master serving its slot, and nowhere else.
      const counters = await Promise.all(
        cluster.primaries.map((p) =>
          cluster
            .client(p)
            .get(`dlock:{${key}}:fence`)
            .catch(() => null),
        ),
      );
      expect(counters).toEqual(cluster.primaries.map((_, n) => (n === i ? '6' : null)));
    }
    // The totals (same hash tag, counted in the scripts' call) are read from each key's master.
    const metrics = await dlock(['metrics', '--redis', url, ...keys]);
    expect(metrics.code, metrics.stderr).toBe(0);
    for (const key of keys) {
      expect(metrics.stdout).toContain(`dlock_lock_acquisitions_total{key="${key}",prefix="dlock:"} 6\n`);
      expect(metrics.stdout).toContain(`dlock_lock_releases_total{key="${key}",prefix="dlock:",exit_class="ok"} 6\n`);
    }
  });

  test('status lists the locks held on every master; release --force frees each, whoever holds it', async () => {
    const dirs = keys.map(() => tempDir());
    // 5s leases: the last holder must still hold after five dlock starts (each up to ~1.5s on a loaded machine).
    const holders = keys.map((key, i) => hold(key, { redis: url, dir: dirs[i], flags: ['-t', '5s'] }));
    await Promise.all(holders.map((h) => h.waitFor('"event":"acquired"')));

    const list = await dlock(['status', '--redis', url, '--json']);
    expect(list.code, list.stderr).toBe(0);
    expect((JSON.parse(list.stdout) as { key: string }[]).map((row) => row.key).sort()).toEqual([...keys].sort());

    for (const [i, key] of keys.entries()) {
      const status = await dlock(['status', '--redis', url, '--json', key]);
      expect(status.code, status.stderr).toBe(0);
      expect(JSON.parse(status.stdout)).toMatchObject({
        key,
        held: true,
        holder: { fence: (await childEnv(dirs[i])).DLOCK_FENCING_TOKEN },
      });
      const released = await dlock(['release', '--force', '--now', '--redis', url, key]);
      expect(released.code, released.stderr).toBe(0);
      expect(released.stdout).toMatch(new RegExp(`^${key}: released the lock held by`));
      expect(expectNoPassword(await holders[i].result).code).toBe(76);
    }
    const after = await dlock(['status', '--redis', url]);
    expect(after.code).toBe(1);
    expect(after.stdout).toBe('no locks held under dlock:\n');
  });

  test('a waiter is woken by the release channel, not by polling, on a master that is not the seed', async () => {
    const key = keys[2];
    const dir = tempDir();
    // A long lease: a waiter that missed the release would sleep until its next poll (5s).
    const holder = hold(key, { redis: url, dir, flags: ['-t', '20s'] });
    await holder.waitFor('"event":"acquired"');
    const waiter = spawnDlock(['run', '--redis', url, '--wait', '30s', '--log-format', 'json', key, '--', 'true']);
    await waiter.waitFor('"event":"waiting"');
    holder.stop();
    const [held, waited] = (await Promise.all([holder.result, waiter.result])).map(expectNoPassword);
    expect(held.code, held.stderr).toBe(0);
    expect(waited.code, waited.stderr).toBe(0);
    const handover = onlyEvent(waited.stderr, 'acquired').ts_ms - onlyEvent(held.stderr, 'released').ts_ms;
    console.log(`cluster hand-over from release to the waiter's acquire: ${Math.round(handover)}ms`);
    expect(handover).toBeLessThan(2_500);
  });

  test('the slot moves to another master during a hold: ASK/MOVED are followed, renewals and release go on', async () => {
    const key = 'moving';
    const lock = `dlock:{${key}}`;
    const dir = tempDir();
    // A 3s lease: a renewal during the move may wait a third of it (not 333ms) on a loaded machine.
    const holder = hold(key, { redis: url, dir, flags: ['-t', '3s'] });
    await holder.waitFor('"event":"acquired"');
    const fence = (await childEnv(dir)).DLOCK_FENCING_TOKEN;
    const from = await cluster.primaryOf(lock);
    const to = cluster.primaries.find((p) => p !== from)!;

    await cluster.moveSlot(await cluster.slotOf(lock), to);
    expect(await cluster.primaryOf(lock)).toBe(to);
    expect(await cluster.client(to).hget(lock, 'fence')).toBe(fence);
    // More than a whole TTL of renewals on the new master (a copy left behind would expire).
    await waitForMoreEvents(holder, 'renewed', 4);
    expect(events(holder.stderr(), 'renew-failed')).toEqual([]);
    const contender = await dlock(['run', '--redis', url, '-n', key, '--', 'true']);
    expect(contender.code, contender.stderr).toBe(75);

    holder.stop();
    const result = expectNoPassword(await holder.result);
    expect(result.code, result.stderr).toBe(0);
    expect(onlyEvent(result.stderr, 'released')).toMatchObject({ released: true });
    const next = await dlock(['run', '--redis', url, '--log-format', 'json', key, '--', 'true']);
    expect(onlyEvent(next.stderr, 'acquired').fence).toBe(String(Number(fence) + 1));
    expect(await cluster.client(to).get(`${lock}:fence`)).toBe(String(Number(fence) + 1));
  });

  test('--slots 2: the slot moves to another master while two holders hold it; each renews there, keeping its slot', async () => {
    const key = 'moving-slots';
    const lock = `dlock:{${key}}`;
    // 3s leases, as above: no renewal may fail during the move, even on a loaded machine.
    const holders = [0, 1].map(() => hold(key, { redis: url, flags: ['-t', '3s', '--slots', '2'] }));
    const children = await Promise.all(holders.map((holder) => holder.child()));
    expect(children.map(({ env }) => env.DLOCK_SLOT).sort()).toEqual(['0', '1']);
    const from = await cluster.primaryOf(lock);
    const to = cluster.primaries.find((p) => p !== from)!;

    await cluster.moveSlot(await cluster.slotOf(lock), to);
    expect(await cluster.primaryOf(lock)).toBe(to);
    expect(await cluster.client(to).zcard(`${lock}:holders`)).toBe(2);
    // More than a whole TTL of renewals on the new master, for each holder.
    for (const holder of holders) await waitForMoreEvents(holder, 'renewed', 4);
    for (const holder of holders) expect(events(holder.stderr(), 'renew-failed')).toEqual([]);
    const contender = await dlock(['run', '--redis', url, '--slots', '2', '-n', key, '--', 'true']);
    expect(contender.code, contender.stderr).toBe(75);

    holders.forEach((holder) => holder.stop());
    for (const holder of holders) {
      const result = expectNoPassword(await holder.result);
      expect(result.code, result.stderr).toBe(0);
      expect(onlyEvent(result.stderr, 'released')).toMatchObject({ released: true });
    }
    const last = children.map(({ env }) => BigInt(env.DLOCK_FENCING_TOKEN)).reduce((a, b) => (a > b ? a : b));
    const next = await dlock(['run', '--redis', url, '--slots', '2', '--log-format', 'json', key, '--', 'true']);
    expect(next.code, next.stderr).toBe(0);
    expect(onlyEvent(next.stderr, 'acquired')).toMatchObject({ fence: String(last + 1n), slot: 0 });
  });

  test('--sync-replicas WAITs on the master serving the lock: with a replica it passes, without one it is 69', async () => {
    // keys[0] is served by the master with a replica, keys[1] and keys[2] by masters without.
    // --connect-timeout 1s (also the WAIT's bound): at 300ms a loaded machine could miss the
    // connection to a node itself, 69 for another reason.
    for (let round = 0; round < 2; round++) {
      const ok = await dlock([
        'run',
        '--redis',
        url,
        '--sync-replicas',
        '1',
        '--connect-timeout',
        '1s',
        keys[0],
        '--',
        'true',
      ]);
      expect(ok.code, ok.stderr).toBe(0);
      for (const key of keys.slice(1)) {
        const dir = tempDir();
        const short = await dlock([
          'run',
          '--redis',
          url,
          '--sync-replicas',
          '1',
          '--connect-timeout',
          '1s',
          key,
          '--',
          'touch',
          join(dir, 'ran'),
        ]);
        expectOneError(
          short,
          69,
          /^dlock: --sync-replicas 1: too few replicas acknowledged the lock within 1000ms \(redis\+cluster:\/\/:\*\*\*@127\.0\.0\.1:\d+: 0 of 1\); released it without running the command$/,
        );
        expect(existsSync(join(dir, 'ran'))).toBe(false);
        expect(await cluster.client(await cluster.primaryOf(`dlock:{${key}}`)).exists(`dlock:{${key}}`)).toBe(0);
      }
    }
  });

  test('unreachable seeds, a server that is not a cluster node, a wrong password: 69 within --connect-timeout', async () => {
    const closed = [await freePort(), await freePort()];
    const none = await dlock([
      'run',
      '--redis',
      `redis+cluster://127.0.0.1:${closed[0]},127.0.0.1:${closed[1]}`,
      '--connect-timeout',
      '1s',
      'k',
      '--',
      'true',
    ]);
    expectOneError(
      none,
      69,
      /^dlock: cannot reach redis\+cluster:\/\/127\.0\.0\.1:\d+,127\.0\.0\.1:\d+: no cluster node answered$/,
    );

    const plain = await RedisServer.start();
    try {
      const result = await dlock([
        'run',
        '--redis',
        `redis+cluster://127.0.0.1:${plain.port}`,
        '--connect-timeout',
        '1s',
        'k',
        '--',
        'true',
      ]);
      expectOneError(
        result,
        69,
        /not a cluster node \(cluster support disabled; use redis:\/\/ for a single server\)$/,
      );
    } finally {
      await plain.close();
    }

    const wrong = await dlock([
      'run',
      '--redis',
      url.replace(`:${PASSWORD}@`, ':not-it@'),
      '--connect-timeout',
      '1s',
      'k',
      '--',
      'true',
    ]);
    expectOneError(
      wrong,
      69,
      /^dlock: cannot reach redis\+cluster:\/\/:\*\*\*@127\.0\.0\.1:\d+: .*authentication failed/,
    );

    cluster.primaries[0].pause();
    // The seed reached through a forwarder that notes when dlock connected, after its start-up.
    const clock = await ConnectClock.start(cluster.primaries[0].port);
    try {
      const seed = url.replace(`127.0.0.1:${cluster.primaries[0].port}`, `127.0.0.1:${clock.port}`);
      const hung = await dlock(['run', '--redis', seed, '--connect-timeout', '600ms', 'k', '--', 'true']);
      const elapsed = Date.now() - clock.firstMs;
      expectOneError(
        hung,
        69,
        /^dlock: cannot reach redis\+cluster:\/\/:\*\*\*@127\.0\.0\.1:\d+: timed out after 600ms$/,
      );
      console.log(`seed SIGSTOPped, --connect-timeout 600ms: 69 ${elapsed}ms after connecting`);
      // From the connection on: dlock's start-up (up to ~1.5s on a loaded machine) is left out.
      expect(elapsed).toBeLessThan(3_000);
    } finally {
      cluster.primaries[0].resume();
      await clock.close();
    }
  });

  test('DLOCK_REDIS_URL may hold a cluster URL with its comma-separated seeds', async () => {
    const seeds = cluster.url(cluster.primaries);
    const result = await dlock(['run', '--log-format', 'json', keys[1], '--', 'true'], {
      env: cleanEnv({ DLOCK_REDIS_URL: seeds }),
    });
    expect(result.code, result.stderr).toBe(0);
    const status = await dlock(['status', '--json', keys[1]], { env: cleanEnv({ DLOCK_REDIS_URL: seeds }) });
    expect(JSON.parse(status.stdout)).toMatchObject({
      held: false,
      quorum: 1,
      instances: [{ redis: seeds.replace(`:${PASSWORD}@`, ':***@') }],
    });
  });
});
