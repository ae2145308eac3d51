// Fencing tokens across 5 instances: the two-round max-register keeps them strictly increasing
// across changing majorities, and they stay exact decimal strings past 2^53.
// Counters must survive restarts (docs/guarantees.md), so these servers fsync every write.

import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { events } from '../fixtures/observe.js';
import { dlock } from '../helpers/cli.js';
import { startServers, type RedisServer } from '../../support/redis-server.mjs';
import { fail, heal, redisFlags, seededRandom, type Fault } from '../helpers/redlock.js';

let servers: RedisServer[];
let clients: Redis[];
let flags: string[];

beforeAll(async () => {
  servers = await startServers(5, { args: ['--appendonly', 'yes', '--appendfsync', 'always'] });
  clients = servers.map((server) => server.client());
  flags = redisFlags(servers);
});
afterEach(() => heal(servers));
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
});

const fenceKey = (key: string) => `dlock:{${key}}:fence`;
const counters = (key: string) => Promise.all(clients.map((client) => client.get(fenceKey(key))));

/** Run a holder that only reports its token; returns DLOCK_FENCING_TOKEN. */
async function nextToken(key: string): Promise<string> {
  const result = await dlock([
    'run',
    ...flags,
    '-t',
    '2s',
    '--log-format',
    'json',
    key,
    '--',
    'sh',
    '-c',
    'printf %s "$DLOCK_FENCING_TOKEN"',
  ]);
  expect(result.code, result.stderr).toBe(0);
  expect(events(result.stderr, 'acquired')[0].fence).toBe(result.stdout);
  return result.stdout;
}

test('a head start on one instance is carried to the others, so losing it does not roll tokens back', async () => {
  const key = 'head-start';
  await clients[0].set(fenceKey(key), '1000');
  const first = await nextToken(key);
  expect(first).toBe('1001');
  // Round 2 raised every instance that was held to the token handed out.
  expect(await counters(key)).toEqual(['1001', '1001', '1001', '1001', '1001']);

  await fail(servers[0], 'stop');
  const second = await nextToken(key);
  expect(BigInt(second)).toBeGreaterThan(BigInt(first));
  expect(second).toBe('1002');

  // The instance comes back with its counter (appendfsync always); the next majority moves on.
  await heal(servers);
  expect(await clients[0].get(fenceKey(key))).toBe('1001');
  expect(await nextToken(key)).toBe('1003');
});

test('20 holders in a row, a random instance down for each: tokens strictly increase', async () => {
  const key = 'changing-majorities';
  const seed = Number(process.env.DLOCK_TEST_SEED ?? Math.floor(Math.random() * 2 ** 31));
  console.log(`fence sequence seed ${seed} (replay with DLOCK_TEST_SEED=${seed})`);
  const random = seededRandom(seed);
  const pick = () => Math.floor(random() * servers.length);

  // Start from uneven counters, as after earlier minorities and restarts.
  for (let i = 0; i < 2; i++) await clients[pick()].set(fenceKey(key), String(1 + Math.floor(random() * 500)));
  const history: string[] = [];
  let previous = 0n;
  for (let n = 0; n < 20; n++) {
    const down = pick();
    const fault: Fault = random() < 0.5 ? 'stop' : 'pause';
    await fail(servers[down], fault);
    const token = await nextToken(key);
    await heal(servers);
    history.push(`${token} (#${down} ${fault})`);
    expect(BigInt(token), `seed ${seed}: ${history.join(', ')}`).toBeGreaterThan(previous);
    previous = BigInt(token);
  }
  console.log(`tokens: ${history.join(', ')}`);
});

test('tokens are decimal strings, exact past 2^53', async () => {
  const key = 'big';
  await Promise.all(clients.map((client) => client.set(fenceKey(key), '9007199254740993')));
  expect(await nextToken(key)).toBe('9007199254740994');
  expect(await counters(key)).toEqual(Array(5).fill('9007199254740994'));

  // The maximum on one instance only, and an odd token no double can hold (it would round).
  await clients[3].set(fenceKey(key), '9007199254740998');
  expect(await nextToken(key)).toBe('9007199254740999');
  expect(await counters(key)).toEqual(Array(5).fill('9007199254740999'));

  // A longer counter is larger than a shorter one that sorts after it as text.
  await Promise.all(clients.map((client) => client.set(fenceKey(key), '99999999999999990')));
  await clients[1].set(fenceKey(key), '100000000000000000');
  expect(await nextToken(key)).toBe('100000000000000001');
  expect(await counters(key)).toEqual(Array(5).fill('100000000000000001'));
});
