// Redis Sentinel (redis+sentinel://): dlock asks the sentinels for the master, follows a
// failover during a hold (forced, and a killed primary), never hangs when the sentinels are
// down, and never prints a password. Real primary + replica + sentinel(s) on loopback.

import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { runConfig, type RunConfig } from '../../src/config/index.js';
import type { RedisConnection } from '../../src/backends/redis/connection.js';
import { UsageError } from '../../src/errors.js';
import { parseRedisUrl, splitRedisUrls } from '../../src/backends/redis/client/url.js';
import { childEnv, events, hold, killLeftovers, onlyEvent, removeTempDirs, tempDir } from '../fixtures/observe.js';
import { cleanEnv, dlock, type Result } from '../helpers/cli.js';
import { expectOneError } from '../helpers/hostile.js';
import { ConnectClock } from '../helpers/connect-clock.js';
import { freePort } from '../../support/redis-server.mjs';
import { waitForEvents, waitForMoreEvents } from '../helpers/redlock.js';
import { SentinelTopology } from '../helpers/topology.js';

const PASSWORD = 'Prim4ry-pw-Qz';
const SENTINEL_PASSWORD = 'S3ntinel-pw-Jx';
const env = cleanEnv({ DLOCK_SENTINEL_PASSWORD: SENTINEL_PASSWORD });

afterEach(killLeftovers);
afterAll(removeTempDirs);

function expectNoPassword(result: Result): void {
  for (const secret of [PASSWORD, SENTINEL_PASSWORD, encodeURIComponent(PASSWORD)]) {
    expect(result.stdout).not.toContain(secret);
    expect(result.stderr).not.toContain(secret);
  }
}

describe('redis+sentinel:// URLs (no server)', () => {
  test.each([
    [
      'one sentinel, default port',
      'redis+sentinel://10.0.0.1/mymaster',
      { kind: 'sentinel', nodes: [{ host: '10.0.0.1', port: 26379 }], masterName: 'mymaster', db: 0 },
    ],
    [
      'three sentinels, user, password, db',
      'redis+sentinel://app:p%40ss@s1:26379,s2:26380,[::1]:26381/mymaster/3',
      {
        username: 'app',
        password: 'p@ss',
        db: 3,
        nodes: [
          { host: 's1', port: 26379 },
          { host: 's2', port: 26380 },
          { host: '::1', port: 26381 },
        ],
      },
    ],
    [
      'password with "/" and "@"',
      'redis+sentinel://:a/b@c@h:1/m',
      { password: 'a/b@c', masterName: 'm', nodes: [{ host: 'h', port: 1 }] },
    ],
  ])('%s', (_what, url, expected) => {
    const target = parseRedisUrl(url, '--redis');
    expect(target).toMatchObject(expected);
    expect(target.label).not.toMatch(/p@ss|p%40ss|a\/b@c/);
  });

  test('the label shows the hosts and master, never the password', () => {
    expect(parseRedisUrl('redis+sentinel://app:secret@s1,s2:26380/mymaster', '--redis').label).toBe(
      'redis+sentinel://app:***@s1:26379,s2:26380/mymaster',
    );
  });

  test.each([
    ['no master name', 'redis+sentinel://h:26379', /master's name/],
    ['empty master name', 'redis+sentinel://h:26379/', /master's name/],
    ['no hosts', 'redis+sentinel:///mymaster', /empty entry/],
    ['an empty host in the list', 'redis+sentinel://a:1,,b:2/m', /empty entry/],
    ['a trailing comma', 'redis+sentinel://a:1,/m', /empty entry/],
    ['a bad port', 'redis+sentinel://a:1,b:99999/m', /port of "b:99999" must be from 1 to 65535/],
    ['a port that is not a number', 'redis+sentinel://a:xx/m', /port of "a:xx"/],
    ['a bad database', 'redis+sentinel://a/m/x', /database number/],
    ['more path', 'redis+sentinel://a/m/0/1', /database number/],
    ['TLS', 'rediss+sentinel://a/m', /TLS is not supported with Sentinel/],
    ['a query string', 'redis+sentinel://a/m?x=1', /query strings/],
  ])('%s is a usage error naming the option', (_what, url, why) => {
    for (const option of ['--redis', 'DLOCK_REDIS_URL']) {
      let error: unknown;
      try {
        parseRedisUrl(
          url
            .replace('redis+sentinel://', `redis+sentinel://u:${PASSWORD}@`)
            .replace('rediss+sentinel://', `rediss+sentinel://u:${PASSWORD}@`),
          option,
        );
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(UsageError);
      expect((error as UsageError).message).toMatch(new RegExp(`^${option}: `));
      expect((error as UsageError).message).toMatch(why);
      expect((error as UsageError).message).not.toContain(PASSWORD);
    }
  });

  test('any text after a multi-host scheme: a target or a usage error, never the password', () => {
    const secret = 'Zq-SECRET-7';
    const piece = fc.constantFrom(
      'a',
      'h',
      ':',
      ',',
      '/',
      '@',
      '[',
      ']',
      '::1',
      '%',
      '%4',
      '1',
      '99999',
      '0',
      'm',
      '?',
      '#',
      '.',
      '-',
      ' ',
    );
    const tail = fc.oneof(
      fc.string(),
      fc.array(piece, { maxLength: 12 }).map((parts) => parts.join('')),
    );
    fc.assert(
      fc.property(
        fc.constantFrom('redis+sentinel://', 'redis+cluster://', 'rediss+cluster://', 'REDIS+SENTINEL://'),
        tail,
        fc.boolean(),
        (scheme, rest, withUser) => {
          const url = `${scheme}${withUser ? 'u' : ''}:${secret}@${rest}`;
          try {
            const target = parseRedisUrl(url, '--redis');
            expect(target.label).not.toContain(secret);
            expect(target.nodes.length).toBeGreaterThan(0);
            expect(target.password).toContain(secret);
          } catch (error) {
            expect(error).toBeInstanceOf(UsageError);
            expect((error as UsageError).message).toMatch(/^--redis: /);
            expect((error as UsageError).message).not.toContain(secret);
          }
        },
      ),
      { numRuns: 3000 },
    );
  });

  test('passwords from the environment: DLOCK_SENTINEL_PASSWORD for the sentinels, DLOCK_REDIS_PASSWORD for the master; neither in the holder metadata', () => {
    const config = runConfig(
      'k',
      ['deploy', `--token=${SENTINEL_PASSWORD}`, PASSWORD],
      { redis: ['redis+sentinel://s1,s2/m', 'redis://plain:6379'] },
      { DLOCK_SENTINEL_PASSWORD: SENTINEL_PASSWORD, DLOCK_REDIS_PASSWORD: PASSWORD },
    ) as RunConfig & RedisConnection;
    expect(config.targets[0]).toMatchObject({
      kind: 'sentinel',
      password: PASSWORD,
      sentinelPassword: SENTINEL_PASSWORD,
    });
    expect(config.targets[1]).toMatchObject({ kind: 'standalone', password: PASSWORD });
    expect(config.targets[1].sentinelPassword).toBeUndefined();
    expect(config.holderCmd).toBe('deploy --token=*** ***');
  });

  test('DLOCK_REDIS_URL is split only where a new URL starts', () => {
    expect(splitRedisUrls('redis+sentinel://:pw@a:1,b:2,c:3/m')).toEqual(['redis+sentinel://:pw@a:1,b:2,c:3/m']);
    expect(
      splitRedisUrls('redis+sentinel://a:1,b:2/m,redis://c:3, rediss://d:4,redis+cluster://e:5,f:6,,redis://g'),
    ).toEqual(['redis+sentinel://a:1,b:2/m', 'redis://c:3', ' rediss://d:4', 'redis+cluster://e:5,f:6', 'redis://g']);
    // A comma not followed by a scheme stays in the URL before it: a password may hold one.
    expect(splitRedisUrls('redis://a:1,nope')).toEqual(['redis://a:1,nope']);
    expect(splitRedisUrls('redis://:pa,ss@a:1,redis://:x,,y@b:2,')).toEqual([
      'redis://:pa,ss@a:1',
      'redis://:x,,y@b:2',
    ]);
    // A comma in a sentinel URL's password stays in it.
    expect(splitRedisUrls('redis+sentinel://:p,w@a:1/m')).toEqual(['redis+sentinel://:p,w@a:1/m']);
  });
});

describe('one topology: primary, replica, sentinel, all with passwords', () => {
  let topology: SentinelTopology;
  beforeAll(async () => {
    topology = await SentinelTopology.start({ password: PASSWORD, sentinelPassword: SENTINEL_PASSWORD });
  });
  afterAll(() => topology.close());

  test('run, status and release --force go to the master the sentinels name', async () => {
    const url = topology.url();
    const first = await dlock(
      ['run', '--redis', url, '--log-format', 'json', '--sync-replicas', '1', 'job', '--', 'true'],
      { env },
    );
    expect(first.code, first.stderr).toBe(0);
    expect(onlyEvent(first.stderr, 'acquired').fence).toBe('1');
    // The fence counter is on the primary, and (WAITed for) on the replica.
    const [primary, replica] = topology.data.servers.map((s) => topology.data.client(s));
    expect(await primary.get('dlock:{job}:fence')).toBe('1');
    expect(await replica.get('dlock:{job}:fence')).toBe('1');

    const dir = tempDir();
    // A 5s lease: the holder must still hold after three dlock starts (each up to ~1.5s on a loaded machine).
    const holder = hold('job', { redis: url, dir, flags: ['-t', '5s'], env });
    await holder.waitFor('"event":"acquired"');
    expect((await childEnv(dir)).DLOCK_FENCING_TOKEN).toBe('2');
    const status = await dlock(['status', '--redis', url, '--json', 'job'], { env });
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({
      key: 'job',
      held: true,
      holder: { fence: '2' },
      instances: [{ redis: url.replace(`:${PASSWORD}@`, ':***@') }],
    });
    const list = await dlock(['status', '--redis', url], { env });
    expect(list.stdout).toMatch(/^job\s+\S+\s+\d+/m);
    const released = await dlock(['release', '--force', '--redis', url, 'job'], { env });
    expect(released.code, released.stderr).toBe(0);
    expect(released.stdout).toMatch(/^job: released the lock held by/);
    expect((await holder.result).code).toBe(76);
    for (const result of [first, status, list, released, await holder.result]) expectNoPassword(result);
  });

  test('the sentinels are tried in order: dead ones first do not matter, in --redis or DLOCK_REDIS_URL', async () => {
    const dead = await freePort();
    const url = topology.url({ sentinels: [dead, topology.sentinels[0].port] });
    const viaFlag = await dlock(['run', '--redis', url, 'order', '--', 'true'], { env });
    expect(viaFlag.code, viaFlag.stderr).toBe(0);
    expect(viaFlag.stderr).toBe('');
    // The comma of the host list does not split DLOCK_REDIS_URL: still one (non-Redlock) instance.
    const viaEnv = await dlock(['status', '--json', 'order'], { env: { ...env, DLOCK_REDIS_URL: url } });
    expect(viaEnv.code, viaEnv.stderr).toBe(1);
    expect(JSON.parse(viaEnv.stdout)).toMatchObject({
      held: false,
      quorum: 1,
      instances: [{ redis: url.replace(`:${PASSWORD}@`, ':***@') }],
    });
  });

  test('no sentinel answers: 69 within --connect-timeout, never a hang', async () => {
    const closed = [await freePort(), await freePort()];
    const started = Date.now();
    const refused = await dlock(
      ['run', '--redis', topology.url({ sentinels: closed }), '--connect-timeout', '1s', 'k', '--', 'true'],
      { env },
    );
    expectOneError(
      refused,
      69,
      /^dlock: cannot reach redis\+sentinel:\/\/:\*\*\*@127\.0\.0\.1:\d+,127\.0\.0\.1:\d+\/dlock-primary: no sentinel answered$/,
    );
    console.log(`sentinels refusing: 69 after ${Date.now() - started}ms`);

    topology.sentinels[0].pause();
    // Reached through a forwarder that notes when dlock connected, after its start-up.
    const clock = await ConnectClock.start(topology.sentinels[0].port);
    try {
      const hung = await dlock(
        ['run', '--redis', topology.url({ sentinels: [clock.port] }), '--connect-timeout', '600ms', 'k', '--', 'true'],
        { env },
      );
      const elapsed = Date.now() - clock.firstMs;
      expectOneError(hung, 69, /^dlock: cannot reach redis\+sentinel:\/\/:\*\*\*@127\.0\.0\.1:\d+\/dlock-primary: /);
      console.log(
        `sentinel SIGSTOPped, --connect-timeout 600ms: 69 ${elapsed}ms after connecting (${hung.stderr.trim()})`,
      );
      // From the connection on (dlock's start-up, up to ~1.5s on a loaded machine, left out):
      // the bound and a margin, nowhere near a hang.
      expect(elapsed).toBeLessThan(3_000);
      const status = await dlock(['status', '--redis', topology.url(), '--connect-timeout', '600ms', 'k'], { env });
      expectOneError(status, 69);
      for (const result of [refused, hung, status]) expectNoPassword(result);
    } finally {
      topology.sentinels[0].resume();
      await clock.close();
    }
  });

  test.each([
    [
      'an unknown master name',
      () => topology.url().replace(/dlock-primary$/, 'other'),
      env,
      /no sentinel knows a master by that name$/,
    ],
    ['a wrong master password', () => topology.url({ password: 'wrong-pw' }), env, /: authentication failed$/],
    [
      'a missing sentinel password',
      () => topology.url(),
      cleanEnv(),
      /the sentinels refused the connection: authentication failed/,
    ],
  ])('%s: 69 with a clear message', async (_what, url, runEnv, message) => {
    const result = await dlock(['run', '--redis', url(), '--connect-timeout', '2s', 'k', '--', 'true'], {
      env: runEnv,
    });
    expectOneError(result, 69, message);
    expectNoPassword(result);
  });

  test('malformed sentinel URLs are usage errors (64) naming the option, before any connection', async () => {
    const port = topology.sentinels[0].port;
    const cases: [string[], NodeJS.ProcessEnv, RegExp][] = [
      [
        ['--redis', `redis+sentinel://:${PASSWORD}@127.0.0.1:${port}`],
        env,
        /^dlock: --redis: the URL needs the master's name/,
      ],
      [
        [],
        { ...env, DLOCK_REDIS_URL: `redis+sentinel://:${PASSWORD}@127.0.0.1:${port},/m` },
        /^dlock: DLOCK_REDIS_URL: the host list has an empty entry/,
      ],
      [
        ['--redis', `redis+sentinel://:${PASSWORD}@127.0.0.1:0/m`],
        env,
        /^dlock: --redis: the port of "127\.0\.0\.1:0" must be from 1 to 65535/,
      ],
    ];
    for (const [flags, runEnv, message] of cases) {
      const result = await dlock(['run', ...flags, 'k', '--', 'true'], { env: runEnv });
      expectOneError(result, 64, message);
      expectNoPassword(result);
    }
  });
});

/** A holder of `key` through the sentinels, WAITing for the replica so the fence survives a failover. */
function holdThroughFailover(topology: SentinelTopology, key: string, dir: string, ttl: string) {
  return hold(key, { redis: topology.url(), dir, flags: ['-t', ttl, '--sync-replicas', '1'], env });
}

/** After the hold: a contender sees the lock on the new master; the next holder gets the next fence there. */
async function expectLockFollowed(
  topology: SentinelTopology,
  key: string,
  fence: string,
  newPrimary: number,
): Promise<void> {
  const next = await dlock(['run', '--redis', topology.url(), '--log-format', 'json', key, '--', 'true'], { env });
  expect(next.code, next.stderr).toBe(0);
  expect(BigInt(onlyEvent(next.stderr, 'acquired').fence!)).toBe(BigInt(fence) + 1n);
  expect(await topology.data.client(topology.server(newPrimary)).get(`dlock:{${key}}:fence`)).toBe(
    String(BigInt(fence) + 1n),
  );
}

test('SENTINEL FAILOVER during a hold (3 sentinels): dlock renews on the new master, the child is never disturbed', async () => {
  const topology = await SentinelTopology.start({
    sentinels: 3,
    quorum: 2,
    password: PASSWORD,
    sentinelPassword: SENTINEL_PASSWORD,
  });
  try {
    const dir = tempDir();
    const key = 'forced';
    // A lease rides out a failover shorter than ttl - ttl/3 (README, Sentinel): renewals sent to
    // the old master while the replica is being promoted are lost. A forced failover takes
    // ~1.2s here, so the TTL must leave more than that (1.5s left only 1s and failed at times).
    const holder = holdThroughFailover(topology, key, dir, '3s');
    await holder.waitFor('"event":"acquired"');
    const fence = (await childEnv(dir)).DLOCK_FENCING_TOKEN;
    const oldPrimary = topology.data.primary.port;

    const failoverAt = Date.now();
    const newPrimary = await topology.failover();
    console.log(`forced failover: +switch-master ${Date.now() - failoverAt}ms after SENTINEL FAILOVER`);
    expect(newPrimary).not.toBe(oldPrimary);

    // Renewals go on for more than a whole TTL after the switch. Had they stayed on the old
    // master (still up, not yet demoted), the copy on the new one would have expired by now.
    await waitForMoreEvents(holder, 'renewed', 4);
    const contender = await dlock(['run', '--redis', topology.url(), '-n', key, '--', 'true'], { env });
    expect(contender.code, contender.stderr).toBe(75);
    const onNew = topology.data.client(topology.server(newPrimary));
    expect(await onNew.hget(`dlock:{${key}}`, 'fence')).toBe(fence);

    writeFileSync(join(dir, 'stop'), '');
    const result = await holder.result;
    expect(result.code, result.stderr).toBe(0);
    expect(events(result.stderr, 'lost')).toEqual([]);
    expect(onlyEvent(result.stderr, 'released')).toMatchObject({ released: true });
    expect(existsSync(join(dir, 'done'))).toBe(true);
    await expectLockFollowed(topology, key, fence, newPrimary);
    expectNoPassword(result);
  } finally {
    await topology.close();
  }
});

test('SENTINEL FAILOVER with --slots 2 and two holders: each renews on the new master and keeps its slot', async () => {
  const topology = await SentinelTopology.start({
    sentinels: 3,
    quorum: 2,
    password: PASSWORD,
    sentinelPassword: SENTINEL_PASSWORD,
  });
  try {
    const key = 'forced-slots';
    const lock = `dlock:{${key}}`;
    const holders = [0, 1].map(() =>
      hold(key, { redis: topology.url(), flags: ['-t', '3s', '--slots', '2', '--sync-replicas', '1'], env }),
    );
    const children = await Promise.all(holders.map((holder) => holder.child()));
    expect(children.map((child) => child.env.DLOCK_SLOT).sort()).toEqual(['0', '1']);

    const newPrimary = await topology.failover();
    // Renewals go on for more than a whole TTL after the switch, for each holder.
    for (const holder of holders) await waitForMoreEvents(holder, 'renewed', 4);
    const onNew = topology.data.client(topology.server(newPrimary));
    expect(await onNew.zcard(`${lock}:holders`)).toBe(2);
    const contender = await dlock(['run', '--redis', topology.url(), '--slots', '2', '-n', key, '--', 'true'], { env });
    expect(contender.code, contender.stderr).toBe(75);

    holders.forEach((holder) => holder.stop());
    for (const holder of holders) {
      const result = await holder.result;
      expectNoPassword(result);
      expect(result.code, result.stderr).toBe(0);
      expect(events(result.stderr, 'lost')).toEqual([]);
      expect(onlyEvent(result.stderr, 'released')).toMatchObject({ released: true });
    }
    const last = children.map((child) => BigInt(child.env.DLOCK_FENCING_TOKEN)).reduce((a, b) => (a > b ? a : b));
    const next = await dlock(
      ['run', '--redis', topology.url(), '--slots', '2', '--log-format', 'json', key, '--', 'true'],
      { env },
    );
    expect(next.code, next.stderr).toBe(0);
    expect(onlyEvent(next.stderr, 'acquired')).toMatchObject({ fence: String(last + 1n), slot: 0 });
  } finally {
    await topology.close();
  }
});

test('the primary is killed during a hold: the sentinel fails over, dlock retries its renewal until it reaches the new master', async () => {
  // Down after 1s, then promotion (~1s): a renewal every 1.7s (ttl 5s) falls into the outage,
  // fails, and is retried until the new master takes it, well within the lease.
  const topology = await SentinelTopology.start({
    downAfterMs: 1_000,
    password: PASSWORD,
    sentinelPassword: SENTINEL_PASSWORD,
  });
  try {
    const dir = tempDir();
    const key = 'killed';
    const holder = holdThroughFailover(topology, key, dir, '5s');
    await holder.waitFor('"event":"acquired"');
    const fence = (await childEnv(dir)).DLOCK_FENCING_TOKEN;

    const { switched } = await topology.nextSwitch();
    await waitForMoreEvents(holder, 'renewed', 1);
    const renewalsBefore = events(holder.stderr(), 'renewed').length;
    const killedAt = Date.now();
    await topology.data.primary.stop();
    const newPrimary = await switched;
    console.log(`primary SIGKILLed: +switch-master after ${Date.now() - killedAt}ms`);
    // The old primary is dead: any renewal from now on was made on the new one.
    await waitForEvents(holder, 'renewed', renewalsBefore + 1);
    const renewedAt = events(holder.stderr(), 'renewed').at(-1)!.ts_ms;
    const failed = events(holder.stderr(), 'renew-failed').length;
    console.log(
      `first renewal on the new master ${Math.round(renewedAt - killedAt)}ms after the kill (ttl 5s; ${failed} failed renewals before it)`,
    );
    expect(failed).toBeGreaterThan(0);

    const contender = await dlock(['run', '--redis', topology.url(), '-n', key, '--', 'true'], { env });
    expect(contender.code, contender.stderr).toBe(75);
    writeFileSync(join(dir, 'stop'), '');
    const result = await holder.result;
    expect(result.code, result.stderr).toBe(0);
    expect(events(result.stderr, 'lost')).toEqual([]);
    expect(onlyEvent(result.stderr, 'released')).toMatchObject({ released: true });
    await expectLockFollowed(topology, key, fence, newPrimary);
    expectNoPassword(result);
  } catch (error) {
    throw new Error(`${String(error)}\nsentinel log:\n${topology.sentinels[0].log()}`);
  } finally {
    await topology.close();
  }
});
