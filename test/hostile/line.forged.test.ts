// The line's data forged with redis-cli (issue 20, defects 5 and 6): whatever the line's
// details say, a holder is admitted only beside the holders actually there and in its own
// mode; a release removes only its own hold. Real redis-server and dlock processes.

import { execFileSync } from 'node:child_process';
import type { Redis } from 'ioredis';
import { expect, test } from 'vitest';
import { RedisServer } from '../../support/redis-server.mjs';
import { waitUntil } from '../../support/wait-until.mjs';
import { events, hold } from '../fixtures/observe.js';
import { dlock } from '../helpers/cli.js';
import { inLine, lineOf, runIn } from '../helpers/line.js';
import { useRedisServer } from '../helpers/server.js';

let redis: RedisServer;
let client: Redis;
useRedisServer((server) => {
  redis = server;
  client = server.client();
});

/** redis-cli against the test's server, as an operator (or an attacker with write access) would. */
function cli(...args: string[]): string {
  return execFileSync('redis-cli', ['-p', String(redis.port), ...args], { encoding: 'utf8' }).trim();
}

test('a writer whose details in line are forged to {"mode":"shared"} still waits for the reader', async () => {
  const reader = hold('r', { redis: redis.url, flags: ['--shared'] });
  await reader.child();
  const writer = runIn(redis.url, 'r', [], ['true']);
  await inLine(writer);
  const [token] = await lineOf(client, 'r');
  cli('HSET', 'dlock:{r}:line:info', token, '{"mode":"shared"}');

  // The writer's next turn at the line (it renews its place every 1.7 s) writes its own mode
  // back; a writer let in instead leaves the line: whichever comes first.
  const healed = async () => JSON.parse((await client.hget('dlock:{r}:line:info', token)) ?? '{}').mode === 'exclusive';
  const entered = () => events(writer.stderr(), 'acquired').length > 0;
  await waitUntil('the writer renews its place or enters', async () => (await healed()) || entered());
  expect(events(writer.stderr(), 'acquired'), writer.stderr()).toEqual([]);
  expect(await lineOf(client, 'r')).toEqual([token]);

  reader.stop();
  expect((await reader.result).code, reader.stderr()).toBe(0);
  expect((await writer.result).code, writer.stderr()).toBe(0);
});

test('a "mode" forged into an exclusive holder\'s hash lets no shared holder in beside it', async () => {
  const writer = hold('w', { redis: redis.url });
  await writer.child();
  cli('HSET', 'dlock:{w}', 'mode', 'shared', 'slots', '1');
  const shared = await dlock(['run', '-n', '--shared', '--redis', redis.url, 'w', '--', 'true']);
  expect(shared.code, shared.stderr).toBe(75);
  writer.stop();
  expect((await writer.result).code, writer.stderr()).toBe(0);
});

test("a release by a token forged into a shared holders' hash leaves the shared holders' holds", async () => {
  const reader = hold('s', { redis: redis.url, flags: ['--shared'] });
  await reader.child();
  const forged = 'e'.repeat(32);
  cli('HSET', 'dlock:{s}', 'owner', forged, 'fence', '99', 'host', 'h', 'pid', '1', 'cmd', 'c');
  const released = await dlock(['release', '--redis', redis.url, '--token', forged, 's']);
  expect(released.code, released.stderr).toBe(0);
  const holders = (await client.hkeys('dlock:{s}')).filter((field) => field.startsWith('h:'));
  expect(holders).toHaveLength(1);
  expect(await client.hexists('dlock:{s}', 'owner')).toBe(0);
  reader.stop();
  expect((await reader.result).code, reader.stderr()).toBe(0);
});

/** The server's clock in ms (the line's leases are on it). */
async function serverMs(): Promise<number> {
  const [seconds, micros] = await client.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

test('a forged ticket of 1e300 in line: the waiters after it get strictly increasing tickets, in order', async () => {
  const holder = hold('t', { redis: redis.url });
  await holder.child();
  cli('ZADD', 'dlock:{t}:line', '1e300', 'zz');
  cli('ZADD', 'dlock:{t}:line:expiry', String((await serverMs()) + 2000), 'zz');
  const waiters = [];
  for (let i = 1; i <= 5; i++) {
    const waiter = runIn(redis.url, 't', [], ['true']);
    await inLine(waiter);
    waiters.push(waiter);
  }
  const line = await client.zrange('dlock:{t}:line', 0, -1, 'WITHSCORES');
  const tokens = line.filter((_, i) => i % 2 === 0);
  const tickets = line.filter((_, i) => i % 2 === 1).map(Number);
  expect(tokens).not.toContain('zz');
  expect(tickets).toHaveLength(5);
  for (let i = 1; i < tickets.length; i++) expect(tickets[i]).toBeGreaterThan(tickets[i - 1]);
  expect(tickets.every((ticket) => Number.isSafeInteger(ticket))).toBe(true);

  holder.stop();
  const acquiredAt = [];
  for (const waiter of waiters) {
    const result = await waiter.result;
    expect(result.code, result.stderr).toBe(0);
    acquiredAt.push(events(result.stderr, 'acquired')[0].ts_ms);
  }
  expect(acquiredAt).toEqual([...acquiredAt].sort((a, b) => a - b));
});

test.for<[string, () => Promise<void>]>([
  [
    'a place lease a day ahead',
    async () => void cli('ZADD', 'dlock:{head}:line:expiry', String((await serverMs()) + 864e5), 'z'),
  ],
  ['no place lease at all', async () => {}],
])('a forged head of the line with %s does not hold up the next waiter of a free lock', async ([, lease]) => {
  await client.del('dlock:{head}:line', 'dlock:{head}:line:expiry');
  cli('ZADD', 'dlock:{head}:line', '1', 'z');
  await lease();
  const result = await dlock(['run', '--wait', '5s', '--redis', redis.url, 'head', '--', 'true']);
  expect(result.code, result.stderr).toBe(0);
  expect(await lineOf(client, 'head')).toEqual([]);
});

test.for(['--force', '--force --now'])('release %s drops a forged head 50 s ahead: the waiter enters', async (f) => {
  const key = `pruned${f.length}`;
  cli('ZADD', `dlock:{${key}}:line`, '1', 'zz');
  cli('ZADD', `dlock:{${key}}:line:expiry`, String((await serverMs()) + 50_000), 'zz');
  const waiter = runIn(redis.url, key, ['--wait', '15s'], ['true']);
  await inLine(waiter);
  const forcedAt = Date.now();
  await dlock(['release', ...f.split(' '), '--redis', redis.url, key]);
  const result = await waiter.result;
  expect(result.code, result.stderr).toBe(0);
  // Woken by the release: well before the forged lease (50 s) or the waiter's next poll.
  expect(events(result.stderr, 'acquired')[0].ts_ms - forcedAt).toBeLessThan(10_000);
});

test('a forged shared holder whose lease ends at 1e300 fails no shared run, leaves nothing half-written', async () => {
  cli('ZADD', 'dlock:{ghost}:holders', '1e300', 'ghost');
  cli('HSET', 'dlock:{ghost}', 'mode', 'shared', 'slots', '1', 'h:ghost', '{}');
  const shared = await dlock(['run', '-n', '--shared', '--redis', redis.url, 'ghost', '--', 'true']);
  expect(shared.code, shared.stderr).toBe(0);
  expect((await client.hkeys('dlock:{ghost}')).sort()).toEqual(['h:ghost', 'mode', 'slots']);
  expect(await client.pttl('dlock:{ghost}')).toBeGreaterThan(0);
});
