// Signals sent to dlock (docs/reference/exit-codes.md, Guarantees): forwarded to the child, dlock waits for
// it, releases and exits with its status; SIGKILL to dlock takes the child down with it
// (parent-death signal) and the lock frees when its TTL runs out.

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { RedisServer } from '../../support/redis-server.mjs';
import { waitUntil } from '../../support/wait-until.mjs';
import {
  childEnv,
  childPid,
  events,
  hold,
  isAlive,
  onlyEvent,
  signalsSeen,
  spawnDlock,
  tempDir,
  waitForDeath,
} from '../fixtures/observe.js';
import { useRedisServer } from '../helpers/server.js';

let redis: RedisServer;
useRedisServer((server) => (redis = server));

const lockExists = async (key: string) => (await redis.client().exists(`dlock:{${key}}`)) === 1;

describe('a terminating signal to dlock reaches the child; the lock is gone right after dlock exits', () => {
  // [signal, what hold.sh does with it, dlock's exit code, what the child recorded]
  test.for([
    ['SIGTERM', 'exit', 143, ['TERM']],
    ['SIGINT', 'exit', 130, ['INT']],
    ['SIGHUP', 'exit', 129, ['HUP']],
    ['SIGQUIT', 'exit', 131, ['QUIT']],
    ['SIGTERM', '3', 3, ['TERM']], // trapped, exits with its own code: passed through
    ['SIGTERM', 'die', 143, []], // not trapped: killed by the signal, 128+15
    ['SIGINT', 'die', 130, []],
  ] as const)('%s, child that does "%s" -> %d', async ([signal, onSignal, code, recorded]) => {
    const key = `sig-${signal}-${onSignal}`;
    const dir = tempDir();
    const holder = hold(key, { redis: redis.url, dir, onSignal });
    const pid = await childPid(dir);
    holder.process.kill(signal);
    const result = await holder.result;
    expect(await lockExists(key)).toBe(false);
    expect(result.code).toBe(code);
    expect(signalsSeen(dir)).toEqual(recorded);
    expect(isAlive(pid)).toBe(false);
    expect(onlyEvent(result.stderr, 'released').released).toBe(true);
  });

  test('a child that ignores SIGTERM is SIGKILLed after --kill-after: 137', async () => {
    const dir = tempDir();
    const holder = hold('sig-stubborn', {
      redis: redis.url,
      dir,
      flags: ['-t', '3s', '--kill-after', '300ms'],
      onSignal: 'ignore',
    });
    await childPid(dir);
    holder.process.kill('SIGTERM');
    const result = await holder.result;
    expect(result.code).toBe(137);
    expect(signalsSeen(dir)).toEqual(['TERM']);
    // dlock's own timestamps of the two signals it sent the child (each right after sending it).
    const sent = events(result.stderr, 'signal');
    expect(sent.map((e) => [e.signal, e.reason])).toEqual([
      ['SIGTERM', 'forwarded'],
      ['SIGKILL', 'kill-after'],
    ]);
    const graceMs = sent[1].ts_ms - sent[0].ts_ms;
    expect(graceMs).toBeGreaterThanOrEqual(300 - 1); // a timer may fire up to 1ms early
    expect(graceMs).toBeLessThan(300 + 1500);
    expect(await lockExists('sig-stubborn')).toBe(false);
  });

  test('SIGUSR1 and SIGUSR2 are forwarded and do not end anything', async () => {
    const dir = tempDir();
    const holder = hold('sig-usr', { redis: redis.url, dir });
    await childPid(dir);
    // One at a time: pending signals of one kind coalesce.
    for (const [i, signal] of (['SIGUSR1', 'SIGUSR2', 'SIGUSR1'] as const).entries()) {
      holder.process.kill(signal);
      await waitUntil(`${signal} recorded`, () => signalsSeen(dir).length > i, { everyMs: 5 });
    }
    expect(await lockExists('sig-usr')).toBe(true);
    holder.stop();
    const result = await holder.result;
    expect(result.code).toBe(0);
    expect(signalsSeen(dir)).toEqual(['USR1', 'USR2', 'USR1']);
  });

  test('SIGTERM while still waiting for the lock: 143 at once, the child never runs', async () => {
    const holdDir = tempDir();
    const holder = hold('sig-wait', { redis: redis.url, dir: holdDir });
    await childPid(holdDir);
    const marker = join(holdDir, 'waiter-ran');
    const waiter = spawnDlock(['run', '--redis', redis.url, '--log-format', 'json', 'sig-wait', '--', 'touch', marker]);
    await waiter.waitFor('"event":"waiting"');
    waiter.process.kill('SIGTERM');
    const result = await waiter.result;
    expect(result.code).toBe(143);
    expect(existsSync(marker)).toBe(false);
    expect(await lockExists('sig-wait')).toBe(true); // still the holder's
    holder.stop();
    expect((await holder.result).code).toBe(0);
  });
});

test('SIGKILL to dlock: the child dies too, and the lock frees once its TTL runs out', async () => {
  const ttl = 1200;
  const dir = tempDir();
  const holder = hold('sig-kill', { redis: redis.url, dir, flags: ['-t', `${ttl}ms`] });
  const pid = await childPid(dir);
  const { DLOCK_FENCING_TOKEN: fence } = await childEnv(dir);
  holder.process.kill('SIGKILL');
  await waitForDeath(pid, 2_000);
  expect(existsSync(join(dir, 'done'))).toBe(false);

  // Nobody released it: the key stays until the server expires it.
  const client = redis.client();
  const expiresAt = Number(await client.call('PEXPIRETIME', 'dlock:{sig-kill}'));
  expect(expiresAt).toBeGreaterThan(Date.now());

  const nextDir = tempDir();
  const next = hold('sig-kill', { redis: redis.url, dir: nextDir, flags: ['--wait', '5s'] });
  await childPid(nextDir);
  const acquired = onlyEvent(next.stderr(), 'acquired');
  console.log(
    `next holder acquired ${acquired.ts_ms - expiresAt}ms after the killed holder's lock expired (waited ${acquired.waited_ms}ms)`,
  );
  expect(acquired.ts_ms).toBeGreaterThanOrEqual(expiresAt);
  expect(BigInt(acquired.fence!)).toBeGreaterThan(BigInt(fence));
  // Noticed when it expired (re-poll at the remaining PTTL), not seconds later.
  expect(acquired.ts_ms - expiresAt).toBeLessThan(1_000);
  next.stop();
  expect((await next.result).code).toBe(0);
});
