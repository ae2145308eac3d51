// Partial failures are reported, not hidden: a release that fails or finds the lock gone, and
// an acquire whose reply was lost (the script ran, dlock never heard), through a TCP proxy in
// front of a real redis-server that drops, stalls or resets on cue.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { start } from '../helpers/cli.js';
import { expectOneError } from '../helpers/hostile.js';
import { TcpProxy } from '../../support/tcp-proxy.mjs';
import { RedisServer, startServers } from '../../support/redis-server.mjs';
import { childEnv, events, HOLD, onlyEvent, removeTempDirs, tempDir } from '../fixtures/observe.js';

let servers: RedisServer[];
let admin: Redis;
let proxies: TcpProxy[] = [];

beforeAll(async () => {
  servers = await startServers(3);
  admin = servers[0].client();
});

afterEach(async () => {
  await Promise.all(proxies.map((p) => p.close()));
  proxies = [];
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  removeTempDirs();
});

async function proxyTo(server: RedisServer): Promise<TcpProxy> {
  const proxy = await TcpProxy.start(server.port);
  proxies.push(proxy);
  return proxy;
}

/** Every key of the lock, with the owner each hash holds (the fence counter stays by design). */
async function leftBehind(key: string, clients: Redis[] = [admin]): Promise<string[]> {
  const found: string[] = [];
  for (const client of clients) {
    if (await client.exists(`dlock:{${key}}`)) found.push(`${await client.hget(`dlock:{${key}}`, 'owner')}`);
  }
  return found;
}

describe('an acquire whose reply is lost', () => {
  test('-n: the lock the script took is released (owner-checked) before the 69, not left for a TTL', async () => {
    const proxy = await proxyTo(servers[0]);
    // The acquire script carries the fence counter's key; -NOSCRIPT is not its reply (EVAL follows).
    const dropped = proxy.dropReplyTo('dlock:{lost-grant}:fence', { pass: /^-NOSCRIPT/ });
    const run = start([
      'run',
      '-n',
      '--ttl',
      '60s',
      '--connect-timeout',
      '2s',
      '--redis',
      proxy.url,
      '--log-format',
      'json',
      'lost-grant',
      '--',
      'true',
    ]);
    await dropped;
    const result = await run.result;
    expectOneError(result, 69, /^dlock: cannot reach redis:\/\/127\.0\.0\.1:\d+: connection lost$/);
    expect(await admin.get('dlock:{lost-grant}:fence')).toBe('1'); // the script ran
    expect(await leftBehind('lost-grant')).toEqual([]);
  });

  test('-n: when the undo cannot reach Redis either, the error says the lock stays until its TTL', async () => {
    const proxy = await proxyTo(servers[0]);
    // Down right after the script ran: every reconnect is refused, so the release cannot get through.
    const dropped = proxy.dropReplyTo('dlock:{lost-undo}:fence', { pass: /^-NOSCRIPT/, then: 'down' });
    const run = start([
      'run',
      '-n',
      '--ttl',
      '60s',
      '--connect-timeout',
      '1s',
      '--redis',
      proxy.url,
      '--log-format',
      'json',
      'lost-undo',
      '--',
      'true',
    ]);
    await dropped;
    const result = await run.result;
    const line = expectOneError(
      result,
      69,
      /could not undo the attempt on redis:\/\/127\.0\.0\.1:\d+: .* \(a lock it took there expires by itself within 1m\)$/,
    );
    expect(line).not.toMatch(/Redis client error|ioredis|Connection is closed/);
    // The script ran and the undo could not: the lock is there, with its TTL (never without one).
    expect(await leftBehind('lost-undo')).toHaveLength(1);
    expect(await admin.pttl('dlock:{lost-undo}')).toBeGreaterThan(0);
    await admin.del('dlock:{lost-undo}');
  });

  test('Redlock -n: the instance whose reply was lost is released too', async () => {
    const proxy = await proxyTo(servers[0]);
    const clients = servers.map((s) => s.client());
    // Instance 2 is held by someone else: no quorum, so every hold of ours is undone.
    await clients[1].hset('dlock:{rl-lost}', 'owner', 'other', 'fence', '1');
    await clients[1].pexpire('dlock:{rl-lost}', 60_000);
    await clients[2].hset('dlock:{rl-lost}', 'owner', 'other', 'fence', '1');
    await clients[2].pexpire('dlock:{rl-lost}', 60_000);
    const dropped = proxy.dropReplyTo('dlock:{rl-lost}:fence', { pass: /^-NOSCRIPT/ });
    const urls = [proxy.url, servers[1].url, servers[2].url].flatMap((u) => ['--redis', u]);
    const result = await start([
      'run',
      '-n',
      '--ttl',
      '60s',
      '--connect-timeout',
      '2s',
      ...urls,
      '--log-format',
      'json',
      'rl-lost',
      '--',
      'true',
    ]).result;
    await dropped;
    expect(result.code, result.stderr).toBe(75);
    expect(await leftBehind('rl-lost', clients)).toEqual(['other', 'other']);
    await Promise.all(clients.map((c) => c.del('dlock:{rl-lost}')));
  });
});

describe('a release that fails', () => {
  test('its reply lost: retried; the retry finds it gone, and says it cannot tell which', async () => {
    const proxy = await proxyTo(servers[0]);
    const dir = tempDir();
    const run = start([
      'run',
      '--ttl',
      '60s',
      '--connect-timeout',
      '2s',
      '--redis',
      proxy.url,
      '--log-format',
      'json',
      'lost-release',
      '--',
      HOLD,
      dir,
    ]);
    await run.waitFor('"acquired"');
    await childEnv(dir);
    const dropped = proxy.dropReplyTo('dlock:{lost-release}:released', { pass: /^-NOSCRIPT/ });
    writeFileSync(join(dir, 'stop'), '');
    await dropped;
    const result = await run.result;
    expect(result.code, result.stderr).toBe(0);
    expect(onlyEvent(result.stderr, 'released')).toMatchObject({ released: true, confirmed: false });
    expect(events(result.stderr, 'release-failed')).toEqual([]);
    expect(await leftBehind('lost-release')).toEqual([]);
  });

  test("Redis unreachable at release: one warning without -v naming it and the expiry bound; the exit code is the command's", async () => {
    const proxy = await proxyTo(servers[0]);
    const dir = tempDir();
    const run = start([
      'run',
      '--ttl',
      '60s',
      '--connect-timeout',
      '1s',
      '--redis',
      proxy.url,
      'stalled-release',
      '--',
      HOLD,
      dir,
    ]);
    await childEnv(dir);
    proxy.stall();
    writeFileSync(join(dir, 'stop'), '');
    const result = await run.result;
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stderr.split('\n').filter(Boolean);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^dlock: could not release stalled-release on redis:\/\/127\.0\.0\.1:\d+: timed out after \d+ms \(it expires by itself within \d+(\.\d)?s\)$/,
    );
    // It is still there, ours, and expires by itself.
    expect(await admin.pttl('dlock:{stalled-release}')).toBeGreaterThan(0);
    await admin.del('dlock:{stalled-release}');
  });

  test('as a json event, with the instance, the reason and the expiry bound, within --connect-timeout', async () => {
    const proxy = await proxyTo(servers[0]);
    const dir = tempDir();
    const run = start([
      'run',
      '--ttl',
      '60s',
      '--connect-timeout',
      '1s',
      '--redis',
      proxy.url,
      '--log-format',
      'json',
      'json-release',
      '--',
      HOLD,
      dir,
    ]);
    await childEnv(dir);
    proxy.stall();
    writeFileSync(join(dir, 'stop'), '');
    const result = await run.result;
    expect(result.code, result.stderr).toBe(0);
    const failed = onlyEvent(result.stderr, 'release-failed');
    expect(failed).toMatchObject({
      key: 'json-release',
      instance: proxy.url,
      error: expect.stringMatching(/timed out/),
    });
    expect(failed.expires_in_ms).toBeGreaterThan(55_000);
    expect(onlyEvent(result.stderr, 'released')).toMatchObject({ released: false });
    // Retried until --connect-timeout (1s) after the command exited, not given up at once, not longer.
    const spent = failed.ts_ms - onlyEvent(result.stderr, 'acquired').ts_ms;
    expect(spent).toBeGreaterThan(900);
    await admin.del('dlock:{json-release}');
  });

  test('the lock was no longer ours (deleted, then taken): a warning without -v that the command may have run unprotected', async () => {
    const dir = tempDir();
    const run = start(['run', '--ttl', '60s', '--redis', servers[0].url, 'taken', '--', HOLD, dir]);
    await childEnv(dir);
    await admin.hset('dlock:{taken}', 'owner', 'someone-else');
    writeFileSync(join(dir, 'stop'), '');
    const result = await run.result;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(
      /^dlock: taken was no longer ours at release \(it expired or was taken, fence \d+\): the command may have run unprotected\n$/,
    );
    expect(await admin.hget('dlock:{taken}', 'owner')).toBe('someone-else');
    await admin.del('dlock:{taken}');
  });

  test('Redlock: only the failing instance is named, in one line', async () => {
    const proxy = await proxyTo(servers[0]);
    const dir = tempDir();
    const urls = [proxy.url, servers[1].url, servers[2].url].flatMap((u) => ['--redis', u]);
    const run = start(['run', '--ttl', '60s', '--connect-timeout', '1s', ...urls, 'rl-release', '--', HOLD, dir]);
    await childEnv(dir);
    proxy.stall();
    writeFileSync(join(dir, 'stop'), '');
    const result = await run.result;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(
      new RegExp(
        `^dlock: could not release rl-release on ${proxy.url.replace(/[./]/g, '\\$&')}: timed out after \\d+ms \\(it expires by itself within \\d+(\\.\\d)?s\\)\\n$`,
      ),
    );
    const clients = [servers[1].client(), servers[2].client()];
    expect(await leftBehind('rl-release', clients)).toEqual([]);
    await admin.del('dlock:{rl-release}');
  });
});
