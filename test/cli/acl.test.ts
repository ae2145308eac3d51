// Least privilege: every dlock command works as an ACL user granted only DLOCK_ACL (the line
// the README shows), and each grant in it is needed (removing it makes the server log a
// denial). Passwords come from the URL, DLOCK_REDIS_PASSWORD or an ACL user, and show nowhere.

import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { cleanEnv, DLOCK, dlock, start } from '../helpers/cli.js';
import { expectOneError } from '../helpers/hostile.js';
import { ConnectClock } from '../helpers/connect-clock.js';
import { RedisServer, startServers } from '../../support/redis-server.mjs';
import { waitUntil } from '../../support/wait-until.mjs';
import { events, HOLD, onlyEvent, removeTempDirs, tempDir } from '../fixtures/observe.js';

/** What the dlock user may do: its keys and channels, and the commands its scripts run. */
const DLOCK_ACL = [
  '~dlock:*',
  '&dlock:*',
  '+evalsha',
  '+eval',
  '+scan',
  '+subscribe',
  '+hget',
  '+hset',
  '+hgetall',
  '+hexists',
  '+hdel',
  '+exists',
  '+pttl',
  '+pexpire',
  '+incr',
  '+get',
  '+set',
  '+del',
  '+publish',
  '+time',
  '+zadd',
  '+zrem',
  '+zrange',
  '+zrangebyscore',
  '+zscore',
  '+zrank',
  '+zrevrangebyscore',
  '+zcard',
  '+wait',
  '+select',
  '+xadd',
  '+xrevrange',
  '+hincrby',
  '+hmget',
];
const PASSWORD = 'acl-pw-Wm3:@/';
const ENCODED = encodeURIComponent(PASSWORD);

let servers: RedisServer[];
let replica: RedisServer;
let admins: Redis[];

async function grant(rules: string[]): Promise<void> {
  for (const admin of admins) {
    await admin.call('ACL', 'SETUSER', 'dlock', 'reset', 'on', `>${PASSWORD}`, ...rules);
    await admin.call('ACL', 'LOG', 'RESET');
    await admin.call('SCRIPT', 'FLUSH');
    // A script that a denial stopped half-way keeps its writes (a lock hash without a TTL).
    await admin.flushall();
  }
}

/** Denials the servers logged, as "reason:object" (e.g. "command:hget", "channel:dlock:{k}:released"). */
async function denials(): Promise<string[]> {
  const all: string[] = [];
  for (const admin of admins) {
    const entries = (await admin.call('ACL', 'LOG')) as unknown[][];
    for (const entry of entries) {
      const fields: Record<string, unknown> = {};
      for (let i = 0; i + 1 < entry.length; i += 2) fields[String(entry[i])] = entry[i + 1];
      all.push(`${fields.reason}:${fields.object}`);
    }
  }
  return all;
}

const urlOf = (port: number, db = '') => `redis://dlock:${ENCODED}@127.0.0.1:${port}${db}`;
const url = (server: RedisServer, db = '') => urlOf(server.port, db);

beforeAll(async () => {
  servers = await startServers(3);
  replica = await RedisServer.start({ args: ['--replicaof', '127.0.0.1', String(servers[0].port)] });
  admins = servers.map((server) => server.client());
  const replicaAdmin = replica.client();
  await waitUntil(
    'the replica to sync',
    async () => (await replicaAdmin.info('replication')).includes('master_link_status:up'),
    { timeoutMs: 20_000, everyMs: 20 },
  );
});

afterAll(async () => {
  await Promise.all([...servers.map((s) => s.close()), replica.close()]);
  removeTempDirs();
});

/** Each scenario exercises some of dlock's commands as the dlock user and checks they worked. */
const SCENARIOS: Record<string, () => Promise<void>> = {
  async run() {
    const result = await dlock(['run', '-n', '--redis', url(servers[0]), 'acl-run', '--', 'true']);
    expect(result.code, result.stderr).toBe(0);
  },
  async statusKey() {
    const result = await dlock(['status', '--json', '--redis', url(servers[0]), 'acl-free']);
    expect(result.code, result.stderr).toBe(1);
  },
  async statusList() {
    await admins[0].hset('dlock:{acl-listed}', 'owner', 'x', 'host', 'h', 'pid', '1', 'fence', '1');
    await admins[0].pexpire('dlock:{acl-listed}', 10_000);
    const result = await dlock(['status', '--json', '--redis', url(servers[0])]);
    await admins[0].del('dlock:{acl-listed}');
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual([expect.objectContaining({ key: 'acl-listed' })]);
  },
  async waitPubSub() {
    // Held by someone else for a while; the waiter subscribes, then gets it on the release message.
    await admins[0].hset('dlock:{acl-wait}', 'owner', 'other', 'fence', '0');
    await admins[0].pexpire('dlock:{acl-wait}', 20_000);
    const waiter = start([
      'run',
      '--redis',
      url(servers[0]),
      '--wait',
      '15s',
      '--log-format',
      'json',
      'acl-wait',
      '--',
      'true',
    ]);
    // "waiting" comes after the subscription: a release from now on is heard at once.
    await waiter.waitFor('"waiting"');
    if ((await denials()).length > 0) {
      waiter.process.kill('SIGTERM'); // the subscription was refused; no need to sit out a poll
      await waiter.result;
      return;
    }
    await admins[0].del('dlock:{acl-wait}');
    await admins[0].publish('dlock:{acl-wait}:released', 'other');
    const result = await waiter.result;
    expect(result.code, result.stderr).toBe(0);
    // Woken by the release (its message, or at the latest the place renewal every 1.7s), not by the 20s expiry.
    expect(onlyEvent(result.stderr, 'acquired').waited_ms).toBeLessThan(4_000);
  },
  async releaseForce() {
    const dir = tempDir();
    const holder = start(['run', '--redis', url(servers[0]), '--log-format', 'json', 'acl-force', '--', HOLD, dir]);
    await holder.waitFor('"acquired"');
    const result = await dlock(['release', '--force', '--redis', url(servers[0]), 'acl-force']);
    expect(result.code, result.stderr).toBe(0);
    writeFileSync(join(dir, 'stop'), '');
    await holder.result;
  },
  async redlock() {
    // Instance 2's counter is ahead: round 2 raises the others to it (SET in the fence script).
    await admins[1].set('dlock:{acl-rl}:fence', '5');
    const result = await dlock([
      'run',
      '-n',
      ...servers.flatMap((s) => ['--redis', url(s)]),
      'acl-rl',
      '--',
      'sh',
      '-c',
      'echo $DLOCK_FENCING_TOKEN',
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(`${await admins[1].get('dlock:{acl-rl}:fence')}\n`);
    expect(await admins[0].get('dlock:{acl-rl}:fence')).toBe(await admins[1].get('dlock:{acl-rl}:fence'));
  },
  async history() {
    // The run appends its events (XADD in its scripts), and history reads them (XREVRANGE).
    expect(
      (await dlock(['run', '-n', '--once-per', '1m', '--redis', url(servers[0]), 'acl-history', '--', 'true'])).code,
    ).toBe(0);
    const result = await dlock(['history', '--json', '--redis', url(servers[0]), 'acl-history']);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).map((entry: { event: string }) => entry.event)).toEqual(['released', 'acquired']);
  },
  async metrics() {
    // The run's scripts count it in the key's totals (HINCRBY); dlock metrics reads them (HMGET).
    expect((await dlock(['run', '-n', '--redis', url(servers[0]), 'acl-metrics', '--', 'true'])).code).toBe(0);
    const result = await dlock(['metrics', '--redis', url(servers[0]), 'acl-metrics']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('dlock_lock_acquisitions_total{key="acl-metrics",prefix="dlock:"} 1\n');
  },
  async databaseAndReplicas() {
    const result = await dlock([
      'run',
      '-n',
      '--redis',
      url(servers[0], '/1'),
      '--sync-replicas',
      '1',
      'acl-db',
      '--',
      'true',
    ]);
    expect(result.code, result.stderr).toBe(0);
  },
};

/** Which scenario needs each grant (the one that fails, or is logged as denied, without it). */
const NEEDED_BY: Record<string, keyof typeof SCENARIOS> = {
  '~dlock:*': 'run',
  '&dlock:*': 'run',
  '+evalsha': 'run',
  '+eval': 'run',
  '+hget': 'run',
  '+exists': 'run',
  '+incr': 'run',
  '+get': 'run',
  '+hset': 'run',
  '+pexpire': 'run',
  '+del': 'run',
  '+publish': 'run',
  '+pttl': 'statusKey',
  '+hgetall': 'statusKey',
  '+scan': 'statusList',
  '+subscribe': 'waitPubSub',
  '+set': 'redlock',
  '+wait': 'databaseAndReplicas',
  '+select': 'databaseAndReplicas',
  // The line: every run reads it (and the clock) before it takes the lock; a waiter joins it.
  '+hexists': 'run',
  '+hdel': 'run',
  '+time': 'run',
  '+zrem': 'run',
  '+zrange': 'run',
  '+zrangebyscore': 'run',
  '+zscore': 'run',
  '+zcard': 'run',
  '+zadd': 'waitPubSub',
  '+zrank': 'waitPubSub',
  '+zrevrangebyscore': 'waitPubSub',
  // History: every script that does the work appends to the key's stream; `dlock history` reads it.
  '+xadd': 'history',
  '+xrevrange': 'history',
  // Totals: the same scripts count each event (dlock metrics' counters), dlock metrics reads them.
  '+hincrby': 'metrics',
  '+hmget': 'metrics',
};

describe('an ACL user with DLOCK_ACL', () => {
  test('runs every command: run, status, status (SCAN), waiting (pub/sub), release --force, Redlock, db and --sync-replicas', async () => {
    await grant(DLOCK_ACL);
    for (const scenario of Object.values(SCENARIOS)) await scenario();
    expect(await denials()).toEqual([]);
    console.log(`README: ACL SETUSER dlock on >PASSWORD ${DLOCK_ACL.join(' ')}`);
  });

  test('needs every grant in DLOCK_ACL: without any one of them the server logs a denial', async () => {
    expect(Object.keys(NEEDED_BY).sort()).toEqual([...DLOCK_ACL].sort());
    for (const rule of DLOCK_ACL) {
      await grant(DLOCK_ACL.filter((r) => r !== rule));
      await SCENARIOS[NEEDED_BY[rule]]().catch(() => undefined);
      const denied = await denials();
      const expected = rule.startsWith('+') ? `command:${rule.slice(1)}` : rule.startsWith('~') ? 'key:' : 'channel:';
      expect(
        denied.some((entry) => entry.startsWith(expected)),
        `without ${rule}: ${denied.join(', ')}`,
      ).toBe(true);
    }
  });

  test('a missing permission is a clear 69, not a stack trace', async () => {
    await grant(DLOCK_ACL.filter((r) => r !== '+evalsha'));
    const result = await dlock(['run', '-n', '--redis', url(servers[0]), 'acl-noperm', '--', 'true']);
    expectOneError(result, 69, /permission denied by the server's ACL: .*'evalsha'/);
    expect(result.stderr).not.toContain(PASSWORD);
    expect(result.stderr).not.toContain(ENCODED);
  });
});

describe('where the password comes from', () => {
  beforeAll(() => grant(DLOCK_ACL));

  test('DLOCK_REDIS_PASSWORD, for a URL with a user and no password', async () => {
    const env = cleanEnv({ DLOCK_REDIS_PASSWORD: PASSWORD });
    const result = await dlock(
      ['run', '--redis', `redis://dlock@127.0.0.1:${servers[0].port}`, '-v', 'acl-env', '--', 'true'],
      { env },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).not.toContain(PASSWORD);
  });

  test('the URL password wins over DLOCK_REDIS_PASSWORD', async () => {
    const env = cleanEnv({ DLOCK_REDIS_PASSWORD: 'not-this-one' });
    expect((await dlock(['status', '--redis', url(servers[0]), 'acl-env'], { env })).code).toBe(1);
  });

  test('a wrong password: 69 "authentication failed", and no password in any output', async () => {
    for (const args of [
      ['run', '-v', '--log-format', 'json', 'k', '--', 'true'],
      ['status', '--json', 'k'],
      ['status'],
      ['release', '--force', 'k'],
    ]) {
      const wrong = `redis://dlock:wrong-Ab7@127.0.0.1:${servers[0].port}`;
      const result = await dlock([args[0], '--redis', wrong, ...args.slice(1)]);
      expectOneError(
        result,
        69,
        /^dlock: cannot reach redis:\/\/dlock:\*\*\*@127\.0\.0\.1:\d+: authentication failed$/,
      );
      expect(result.stdout + result.stderr).not.toContain('wrong-Ab7');
    }
  });

  test('a password given to a server that needs none is accepted quietly', async () => {
    const open = await RedisServer.start();
    try {
      const result = await dlock(
        ['run', '--redis', `redis://:unused-pw@127.0.0.1:${open.port}`, 'quiet', '--', 'true'],
        { env: cleanEnv({ DLOCK_REDIS_PASSWORD: 'also-unused' }) },
      );
      expect(result.code).toBe(0);
      expect(result.stderr).toBe('');
    } finally {
      await open.close();
    }
  });
});

describe('the holder metadata', () => {
  beforeAll(() => grant(DLOCK_ACL));

  test('cmd is stored truncated, with the Redis password masked; --no-cmd-metadata stores none', async () => {
    const dir = tempDir();
    const long = 'x'.repeat(400);
    const holder = start([
      'run',
      '--redis',
      url(servers[0]),
      '--log-format',
      'json',
      '-v',
      'meta',
      '--',
      HOLD,
      dir,
      PASSWORD,
      long,
    ]);
    await holder.waitFor('"acquired"');
    const cmd = (await admins[0].hget('dlock:{meta}', 'cmd'))!;
    expect(cmd).toBe(`${HOLD} ${dir} *** ${long}`.slice(0, 256));
    const status = await dlock(['status', '--json', '--redis', url(servers[0]), 'meta']);
    expect(JSON.parse(status.stdout).holder.cmd).toBe(cmd);
    writeFileSync(join(dir, 'stop'), '');
    const result = await holder.result;
    expect(result.stderr).not.toContain(PASSWORD);
    expect(onlyEvent(result.stderr, 'released')).toMatchObject({ key: 'meta', released: true });

    const secretDir = tempDir();
    const quiet = start([
      'run',
      '--redis',
      url(servers[0]),
      '--no-cmd-metadata',
      '--log-format',
      'json',
      'meta',
      '--',
      HOLD,
      secretDir,
      '--token=s3cr3t',
    ]);
    await quiet.waitFor('"acquired"');
    expect(await admins[0].hget('dlock:{meta}', 'cmd')).toBe('');
    const shown = await dlock(['status', '--redis', url(servers[0]), 'meta']);
    expect(shown.stdout).not.toContain('s3cr3t');
    writeFileSync(join(secretDir, 'stop'), '');
    expect((await quiet.result).code).toBe(0);
  });
});

/** The grants without `rule`. */
const without = (rule: string) => DLOCK_ACL.filter((r) => r !== rule);

describe('a missing grant does what the README says', () => {
  test('no +subscribe: one warning, then the wait works by polling (a release is noticed within 5s)', async () => {
    await grant(without('+subscribe'));
    await admins[0].hset('dlock:{acl-poll}', 'owner', 'other', 'fence', '0');
    await admins[0].pexpire('dlock:{acl-poll}', 30_000);
    const waiter = start([
      'run',
      '--redis',
      url(servers[0]),
      '--wait',
      '20s',
      '--log-format',
      'json',
      'acl-poll',
      '--',
      'true',
    ]);
    await waiter.waitFor('"poll-only"');
    await waiter.waitFor('"waiting"');
    const releasedAt = Date.now();
    await admins[0].del('dlock:{acl-poll}');
    const result = await waiter.result;
    expect(result.code, result.stderr).toBe(0);
    expect(onlyEvent(result.stderr, 'poll-only').message).toMatch(
      /^cannot subscribe to acl-poll's release channel \(redis:\/\/dlock:\*\*\*@127\.0\.0\.1:\d+: permission denied by the server's ACL: .*subscribe.*\); waiting by polling, so a release is noticed within 5s instead of at once$/,
    );
    // Noticed by the next poll (at most 5s plus a jitter of at most 50ms), not by the 30s expiry.
    expect(onlyEvent(result.stderr, 'acquired').ts_ms - releasedAt).toBeLessThan(5_100);
    expect(events(result.stderr).filter((e) => e.event === 'error' || e.event === 'warning')).toEqual([]);
  });

  test('no +publish: the release is done (the DEL ran) and one warning says waiters notice by polling', async () => {
    await grant(without('+publish'));
    const result = await dlock(['run', '-n', '--redis', url(servers[0]), 'acl-nopub', '--', 'true']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(
      /^dlock: released acl-nopub, but redis:\/\/dlock:\*\*\*@127\.0\.0\.1:\d+ refused to tell the waiters \(PUBLISH denied: grant \+publish\); they notice by polling, within 5s\n$/,
    );
    expect(await admins[0].exists('dlock:{acl-nopub}')).toBe(0);
  });

  test("no +del: the release is reported failed at once (no retry loop), with when the lock expires; the exit code is the command's", async () => {
    await grant(without('+del'));
    const result = await dlock([
      'run',
      '-n',
      '--ttl',
      '20s',
      '--log-format',
      'json',
      '--redis',
      url(servers[0]),
      'acl-nodel',
      '--',
      'true',
    ]);
    expect(result.code, result.stderr).toBe(0);
    const failed = onlyEvent(result.stderr, 'release-failed');
    expect(failed.message).toMatch(
      /^could not release acl-nodel on redis:\/\/dlock:\*\*\*@127\.0\.0\.1:\d+: permission denied by the server's ACL: .* \(it expires by itself within (19|20)(\.\d)?s\)$/,
    );
    expect(failed.ts_ms - onlyEvent(result.stderr, 'acquired').ts_ms).toBeLessThan(1_000);
    expect(await admins[0].pttl('dlock:{acl-nodel}')).toBeGreaterThan(0);
  });

  test('no +set, Redlock: 69 "permission denied" at once, never busy, the fence counters raised once, nothing left', async () => {
    await grant(without('+set'));
    // Instance 2's counter is ahead, so round 2 must SET the others.
    await admins[1].set('dlock:{acl-noset}:fence', '5');
    // Reached through forwarders that note when dlock connected, after its start-up.
    const clocks = await Promise.all(servers.map((server) => ConnectClock.start(server.port)));
    const result = await dlock([
      'run',
      '--wait',
      '10s',
      '--connect-timeout',
      '2s',
      '--log-format',
      'json',
      ...clocks.flatMap((clock) => ['--redis', urlOf(clock.port)]),
      'acl-noset',
      '--',
      'true',
    ]);
    await Promise.all(clocks.map((clock) => clock.close()));
    const line = expectOneError(result, 69, /^dlock: no quorum: .*permission denied by the server's ACL/);
    expect(line).not.toMatch(/busy/);
    // From dlock's first connection (its start-up, up to ~1.5s on a loaded machine, left out).
    const connectedAt = Math.min(...clocks.map((clock) => clock.firstMs));
    expect(onlyEvent(result.stderr, 'error').ts_ms - connectedAt).toBeLessThan(2_000);
    expect(await Promise.all(admins.map((a) => a.get('dlock:{acl-noset}:fence')))).toEqual(['1', '6', '1']);
    expect(await Promise.all(admins.map((a) => a.exists('dlock:{acl-noset}')))).toEqual([0, 0, 0]);
  });

  test('no +wait, --sync-replicas: 69 "permission denied" at once, the command not run, nothing left', async () => {
    await grant(without('+wait'));
    const dir = tempDir();
    // Reached through a forwarder that notes when dlock connected, after its start-up.
    const clock = await ConnectClock.start(servers[0].port);
    const result = await dlock([
      'run',
      '-n',
      '--sync-replicas',
      '1',
      '--connect-timeout',
      '2s',
      '--log-format',
      'json',
      '--redis',
      urlOf(clock.port),
      'acl-nowait',
      '--',
      'touch',
      join(dir, 'ran'),
    ]);
    await clock.close();
    expect(result.code, result.stderr).toBe(69);
    expect(events(result.stderr).map((e) => e.event)).toEqual(['acquired', 'released', 'error']);
    const error = onlyEvent(result.stderr, 'error');
    expect(error.message).toMatch(
      /^--sync-replicas 1: WAIT refused on redis:\/\/dlock:\*\*\*@127\.0\.0\.1:\d+: permission denied by the server's ACL: .*'wait'.*; released the lock without running the command$/,
    );
    // From dlock's connection (its start-up, up to ~1.5s on a loaded machine, left out).
    expect(error.ts_ms - clock.firstMs).toBeLessThan(2_000);
    expect(existsSync(join(dir, 'ran'))).toBe(false);
    expect(await admins[0].get('dlock:{acl-nowait}:fence')).toBe('1');
    expect(await admins[0].exists('dlock:{acl-nowait}')).toBe(0);
  });

  test('status without a key lists a lock it may not read as unreadable, and exits 69', async () => {
    // Only dlock:{visible}... may be read; SCAN still names every key.
    await grant([...without('~dlock:*'), '~dlock:{visible}*']);
    for (const key of ['visible', 'hidden']) {
      await admins[0].hset(
        `dlock:{${key}}`,
        'owner',
        'x',
        'host',
        'h',
        'pid',
        '1',
        'fence',
        '1',
        'since_ms',
        String(Date.now()),
        'ttl_ms',
        '10000',
      );
      await admins[0].pexpire(`dlock:{${key}}`, 10_000);
    }
    const json = await dlock(['status', '--json', '--redis', url(servers[0])]);
    expect(json.code, json.stderr).toBe(69);
    expect(JSON.parse(json.stdout)).toEqual([
      { key: 'hidden', error: expect.stringMatching(/^permission denied by the server's ACL/) },
      expect.objectContaining({ key: 'visible', host: 'h' }),
    ]);
    expectOneError(
      { ...json, stdout: '' },
      69,
      /^dlock: could not read 1 of the 2 locks under dlock: \(hidden: permission denied by the server's ACL: .*\)$/,
    );
    const text = await dlock(['status', '--redis', url(servers[0])]);
    expect(text.code).toBe(69);
    expect(text.stdout).toMatch(
      /^KEY +HOST.*\nvisible +h +1 .*\nhidden +unreadable: permission denied by the server's ACL: .*\n$/,
    );
  });
});

describe('a missing grant is 69 naming it, never busy', () => {
  test('a lock script the ACL stops names the command it may not run and the grant to add', async () => {
    for (const rule of ['+zcard', '+time', '+pexpire']) {
      await grant(without(rule));
      const result = await dlock(['run', '-n', '--redis', url(servers[0]), 'acl-named', '--', 'true']);
      const command = rule.slice(1).toUpperCase();
      const named = new RegExp(
        `permission denied by the server's ACL: .*: it may not run ${command} \\(grant \\${rule}\\)$`,
      );
      expectOneError(result, 69, named);
    }
  });

  test('without +hgetall, +get or +zcard, a held key is 69 naming the grant, not busy (-n, and a --wait that runs out)', async () => {
    for (const rule of ['+hgetall', '+get', '+zcard']) {
      await grant(without(rule));
      await admins[0].hset('dlock:{acl-held}', 'owner', 'other', 'fence', '0');
      await admins[0].pexpire('dlock:{acl-held}', 20_000);
      for (const wait of [['-n'], ['--wait', '300ms']]) {
        // -q: no "waiting for" status line on the pipe; the error line shows all the same.
        const result = await dlock(['run', '-q', ...wait, '--redis', url(servers[0]), 'acl-held', '--', 'true']);
        const line = expectOneError(
          result,
          69,
          new RegExp(`permission denied by the server's ACL: .*\\(grant \\${rule}\\)$`),
        );
        expect(line, `without ${rule}, ${wait.join(' ')}`).not.toMatch(/busy/);
      }
    }
  });

  // Issue 31: -n, the spinner and a --wait that ran out were 69, but a plain wait on a pipe said
  // "held", waited for the lease to end and ran the command (exit 0).
  test.for<[string, string[]]>([
    ['text on a pipe', []],
    ['--quiet', ['-q']],
    ['json', ['--log-format', 'json']],
  ])('without +hgetall, a plain wait (%s) is 69 naming the grant at once, the command not run', async ([, flags]) => {
    await grant(without('+hgetall'));
    const key = `acl-plain-${flags.join('')}`;
    await admins[0].hset(`dlock:{${key}}`, 'owner', 'other', 'fence', '0', 'host', 'h', 'pid', '1');
    await admins[0].pexpire(`dlock:{${key}}`, 4_000);
    const marker = join(tempDir(), 'ran');
    const result = await dlock(['run', ...flags, '--redis', url(servers[0]), key, '--', 'touch', marker]);
    expect(result.code, result.stderr).toBe(69);
    const last = result.stderr.trimEnd().split('\n').at(-1)!;
    expect(last).toMatch(/permission denied by the server's ACL: .*\(grant \+hgetall\)/);
    expect(result.stderr).not.toMatch(/busy|acquired/);
    expect(existsSync(marker)).toBe(false);
    expect(await admins[0].pttl(`dlock:{${key}}`), 'the lease was not waited out').toBeGreaterThan(0);
  });

  // The review of issue 31: every mode but -n said "cannot reach <url>", though the server answered.
  test('without +hgetall, every output mode, acquire and status KEY say "cannot read who holds K" (as -n does), 69', async () => {
    await grant(without('+hgetall'));
    const key = 'acl-words';
    await admins[0].hset(`dlock:{${key}}`, 'owner', 'other', 'fence', '0', 'host', 'h', 'pid', '1');
    await admins[0].pexpire(`dlock:{${key}}`, 20_000);
    const redis = ['--redis', url(servers[0])];
    const cases: [string, string[], Record<string, string>?][] = [
      ['plain', ['run', ...redis, key, '--', 'true']],
      ['-w 1s', ['run', '-w', '1s', ...redis, key, '--', 'true']],
      ['-q', ['run', '-q', ...redis, key, '--', 'true']],
      ['-n', ['run', '-n', ...redis, key, '--', 'true']],
      ['CI', ['run', ...redis, key, '--', 'true'], { CI: 'true' }],
      ['acquire', ['acquire', '--no-keeper', ...redis, key]],
      ['status KEY', ['status', ...redis, key]],
    ];
    for (const [name, args, env] of cases) {
      const result = await dlock(args, { env: cleanEnv(env) });
      expect(result.code, name).toBe(69);
      const last = result.stderr.trimEnd().split('\n').at(-1)!;
      expect(last, name).toMatch(new RegExp(`^dlock: cannot read who holds ${key}: .*\\(grant \\+hgetall\\)$`));
      expect(result.stderr, name).not.toMatch(/cannot reach/);
    }
  });

  test('without +hdel or +zrem, leaving the line is 69 naming the grant when a wait runs out, and a warning when interrupted', async () => {
    for (const rule of ['+hdel', '+zrem']) {
      await grant(without(rule));
      await admins[0].hset('dlock:{acl-line}', 'owner', 'other', 'fence', '0');
      await admins[0].pexpire('dlock:{acl-line}', 20_000);
      const ranOut = await dlock([
        'run',
        '-q',
        '--wait',
        '300ms',
        '--redis',
        url(servers[0]),
        'acl-line',
        '--',
        'true',
      ]);
      const line = expectOneError(
        ranOut,
        69,
        new RegExp(`permission denied by the server's ACL: .*\\(grant \\${rule}\\)$`),
      );
      expect(line, `without ${rule}`).not.toMatch(/busy/);

      await admins[0].flushall();
      await admins[0].hset('dlock:{acl-line}', 'owner', 'other', 'fence', '0');
      await admins[0].pexpire('dlock:{acl-line}', 20_000);
      const waiter = start(['run', '--log-format', 'json', '--redis', url(servers[0]), 'acl-line', '--', 'true']);
      await waiter.waitFor('"waiting"');
      waiter.process.kill('SIGINT');
      const interrupted = await waiter.result;
      expect(interrupted.code, interrupted.stderr).toBe(130);
      expect(onlyEvent(interrupted.stderr, 'not-left').message).toMatch(
        new RegExp(
          `^could not leave the line of acl-line on .*\\(grant \\${rule}\\) \\(the place lapses within 5s\\)$`,
        ),
      );
    }
  });

  test('no +publish: dlock release by token releases (exit 0) and warns that waiters notice by polling, as run does', async () => {
    await grant(without('+publish'));
    const acquired = await dlock([
      'acquire',
      '--no-keeper',
      '--format',
      'json',
      '--redis',
      url(servers[0]),
      'acl-token',
    ]);
    expect(acquired.code, acquired.stderr).toBe(0);
    const { token } = JSON.parse(acquired.stdout) as { token: string };
    const result = await dlock(['release', '--token', token, '--redis', url(servers[0]), 'acl-token']);
    expect(result.code, result.stderr).toBe(0);
    const warning =
      /^dlock: released acl-token, but redis:\/\/dlock:\*\*\*@127\.0\.0\.1:\d+ refused to tell the waiters \(PUBLISH denied: grant \+publish\); they notice by polling, within 5s\n$/;
    expect(result.stderr).toMatch(warning);
    expect(await admins[0].exists('dlock:{acl-token}')).toBe(0);
  });

  test("without +hgetall, a nested dlock run on its parent's key is 69 naming the grant, not a wait for its own parent", async () => {
    await grant(without('+hgetall'));
    // The nested run is bounded by timeout(1): waiting for its parent, it would never end (124).
    const nested = `timeout 5 "$DLOCK" run --redis "$URL" acl-nested -- true; echo "nested=$?" >&2`;
    const env = cleanEnv({ DLOCK, URL: url(servers[0]) });
    const result = await dlock(['run', '--redis', url(servers[0]), 'acl-nested', '--', 'sh', '-c', nested], { env });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(
      /^dlock: cannot read who holds acl-nested: redis:\/\/dlock:\*\*\*@127\.0\.0\.1:\d+: permission denied .*\(grant \+hgetall\)\nnested=69\n$/,
    );
  });

  test('without +hgetall, waiting at a terminal (the spinner reads the holder): 69 at once, not a wait that ends busy', async () => {
    await grant(without('+hgetall'));
    await admins[0].hset('dlock:{acl-held}', 'owner', 'other', 'fence', '0');
    await admins[0].pexpire('dlock:{acl-held}', 20_000);
    // script(1) gives dlock a pseudo-terminal for stderr, as a user waiting at one has.
    const run = `stty cols 100 rows 40; "$DLOCK" run --wait 5s --redis "$URL" acl-held -- true; echo "rc=$?"`;
    const env = cleanEnv({ DLOCK, URL: url(servers[0]), TERM: 'xterm' });
    const child = spawn('script', ['-qfec', run, '/dev/null'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let seen = '';
    child.stdout.on('data', (d) => (seen += d));
    const started = Date.now();
    await new Promise((resolve) => child.on('close', resolve));
    expect(seen).toMatch(
      /dlock: cannot read who holds acl-held: redis:\/\/dlock:\*\*\*@127\.0\.0\.1:\d+: permission denied .*\(grant \+hgetall\)/,
    );
    expect(seen).toMatch(/rc=69\r?\n/);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
