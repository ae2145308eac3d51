// The lease while the child runs (docs/guarantees.md): renewal keeps a long child's lock,
// a lock removed from outside is lost at once (76, the child terminated per --on-lost), and a
// Redis that stops answering gets the child killed before the key's server-side expiry.

import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { driftMs, schedulingMarginMs } from '../../src/timing.js';
import { dlock } from '../helpers/cli.js';
import { RedisServer } from '../../support/redis-server.mjs';
import {
  childEnv,
  childPid,
  events,
  hold,
  HOLD,
  isAlive,
  killLeftovers,
  onlyEvent,
  removeTempDirs,
  signalsSeen,
  spawnDlock,
  tempDir,
  waitForDeath,
} from '../fixtures/observe.js';

let redis: RedisServer;
beforeAll(async () => {
  redis = await RedisServer.start();
});
afterEach(() => {
  redis.resume();
  killLeftovers();
});
afterAll(async () => {
  await redis.close();
  removeTempDirs();
});

test('a child that outlives 3×TTL keeps the lock: a --no-wait contender gets 75 throughout', async () => {
  // 1.5s, not 500ms: a 500ms lease gives up by itself when a loaded machine stalls dlock for ~100ms
  // while the contenders start; what is tested is the ratio, more than 3 TTLs of contenders.
  const ttl = 1500;
  const dir = tempDir();
  const holder = hold('long', { redis: redis.url, dir, flags: ['-t', `${ttl}ms`] });
  const pid = await childPid(dir);
  const { DLOCK_FENCING_TOKEN: fence } = await childEnv(dir);
  const since = Date.now();
  const marker = join(dir, 'contender-ran');

  let checks = 0;
  while (Date.now() - since < 3 * ttl || checks < 4) {
    const contender = await dlock(['run', '--redis', redis.url, '-n', 'long', '--', 'touch', marker]);
    expect(contender.code).toBe(75);
    checks++;
  }
  const heldMs = Date.now() - since;
  console.log(`${checks} --no-wait contenders got 75 while the child ran ${heldMs}ms under a ${ttl}ms TTL`);

  expect(isAlive(pid)).toBe(true);
  expect(await redis.client().hget('dlock:{long}', 'fence')).toBe(fence);
  holder.stop();
  const result = await holder.result;
  expect(result.code).toBe(0);
  expect(events(result.stderr, 'lost')).toEqual([]);
  expect(events(result.stderr, 'renewed').length).toBeGreaterThanOrEqual(3);
  expect(onlyEvent(result.stderr, 'released').released).toBe(true);
  expect(existsSync(marker)).toBe(false);
  expect(await redis.client().exists('dlock:{long}')).toBe(0);
});

describe('the lock removed from outside: lost at the next renewal', () => {
  test.for(['DEL', 'FLUSHALL'])('%s: the child gets SIGTERM and dlock exits 76', async (how) => {
    const key = `gone-${how}`;
    const dir = tempDir();
    // 1.5s, not 600ms: a 600ms lease gives up by itself ("expiring", not "refused") when a loaded
    // machine stalls dlock for ~150ms. The bound below is the renewal interval (500ms) and a margin.
    const holder = hold(key, { redis: redis.url, dir, flags: ['-t', '1500ms'] });
    const pid = await childPid(dir);
    // Taken before the removal: the interval measured can only be longer than the real one.
    const removedAt = Date.now();
    if (how === 'DEL') await redis.client().del(`dlock:{${key}}`);
    else await redis.client().flushall();
    await waitForDeath(pid);
    const result = await holder.result;
    // When dlock sent SIGTERM, from its own event (the signal goes out before the event is written).
    const termAt = onlyEvent(result.stderr, 'signal').ts_ms;
    console.log(
      `${how}: SIGTERM to the child ${Math.round(termAt - removedAt)}ms after the lock was removed (renewal every 500ms)`,
    );

    expect(result.code).toBe(76);
    expect(signalsSeen(dir)).toEqual(['TERM']);
    expect(onlyEvent(result.stderr, 'lost').reason).toBe('refused');
    expect(onlyEvent(result.stderr, 'released').released).toBe(false);
    expect(onlyEvent(result.stderr, 'error')).toMatchObject({
      exit_code: 76,
      message: expect.stringMatching(/^lost the lock gone-\w+ while the command ran/),
    });
    // "the command", as every other line says, never "the child".
    expect(onlyEvent(result.stderr, 'lost').message).toMatch(/; terminating the command$/);
    expect(result.stderr).not.toMatch(/\bchild\b/);
    expect(onlyEvent(result.stderr, 'signal')).toMatchObject({ signal: 'SIGTERM', reason: 'lost' });
    expect(termAt - removedAt).toBeLessThan(500 + 1000);
  });

  test('--on-lost kill: SIGKILL at once, no SIGTERM first', async () => {
    const dir = tempDir();
    const holder = hold('gone-kill', { redis: redis.url, dir, flags: ['-t', '600ms', '--on-lost', 'kill'] });
    const pid = await childPid(dir);
    await redis.client().del('dlock:{gone-kill}');
    await waitForDeath(pid);
    const result = await holder.result;
    expect(result.code).toBe(76);
    expect(signalsSeen(dir)).toEqual([]);
    expect(existsSync(join(dir, 'done'))).toBe(false);
  });

  test('--on-lost term: a child that ignores SIGTERM is SIGKILLed after --kill-after', async () => {
    const dir = tempDir();
    const holder = hold('gone-stubborn', {
      redis: redis.url,
      dir,
      // 3s, not 900ms: a short lease that gives up by itself on a loaded machine may SIGKILL at
      // once (dlock stalled past the deadline), with no SIGTERM to see.
      flags: ['-t', '3s', '--kill-after', '150ms'],
      onSignal: 'ignore',
    });
    const pid = await childPid(dir);
    await redis.client().del('dlock:{gone-stubborn}');
    await waitForDeath(pid);
    const result = await holder.result;
    expect(result.code).toBe(76);
    expect(signalsSeen(dir)).toEqual(['TERM']);
    // dlock's own timestamps of the two signals (each written right after the signal was sent).
    const sent = events(result.stderr, 'signal');
    expect(sent.map((e) => [e.signal, e.reason])).toEqual([
      ['SIGTERM', 'lost'],
      ['SIGKILL', 'kill-after'],
    ]);
    const graceMs = sent[1].ts_ms - sent[0].ts_ms;
    console.log(`SIGKILL ${Math.round(graceMs)}ms after SIGTERM (--kill-after 150ms)`);
    expect(graceMs).toBeGreaterThanOrEqual(100);
    expect(graceMs).toBeLessThan(150 + 1000);
  });

  test('--on-lost ignore: only a warning; the child runs on, dlock still exits 76', async () => {
    const dir = tempDir();
    const holder = spawnDlock([
      'run',
      '--redis',
      redis.url,
      '-t',
      '600ms',
      '--on-lost',
      'ignore',
      'gone-ignore',
      '--',
      HOLD,
      dir,
    ]);
    const pid = await childPid(dir);
    await redis.client().del('dlock:{gone-ignore}');
    await holder.waitFor(/^dlock: lost gone-ignore/m);
    expect(isAlive(pid)).toBe(true);
    writeFileSync(join(dir, 'stop'), '');
    const result = await holder.result;
    expect(result.code).toBe(76);
    expect(signalsSeen(dir)).toEqual([]);
    expect(existsSync(join(dir, 'done'))).toBe(true);
  });
});

describe('Redis paused (SIGSTOP) past the TTL: the child dies before the server-side expiry', () => {
  // Soundness: PEXPIRETIME is read right after a renewal (the next one is ttl/3 away) and the
  // server is paused at once, so it is the key's expiry for good: every later extend fails
  // (checked: no "renewed" event after the pause). The death time is when the test first saw
  // the pid gone, which is at or after the real death: "died < expiry" is then a safe claim.
  // Both are wall-clock ms on this one machine (Redis and Date.now() share the clock).
  test.for([
    ['exits on SIGTERM', 'exit', ['TERM']],
    ['ignores SIGTERM (SIGKILL at the local deadline)', 'ignore', ['TERM']],
  ] as const)('a child that %s', async ([, onSignal, signals]) => {
    const key = `paused-${onSignal}`;
    const lockKey = `dlock:{${key}}`;
    const dir = tempDir();
    const client = redis.client();
    // The margin that makes this hold is dlock's drift (docs/operations/deployments.md), ttl*1% + 2ms: with a 1.5s TTL that
    // was 17ms, less than a busy 2-core CI machine's timer and polling lateness at times.
    const holder = hold(key, { redis: redis.url, dir, flags: ['-t', '5s'], onSignal });
    const pid = await childPid(dir);
    await holder.waitFor('"event":"renewed"');
    const expiresAt = Number(await client.call('PEXPIRETIME', lockKey));
    redis.pause();
    const renewalsBeforePause = events(holder.stderr(), 'renewed').length;

    let diedAt: number;
    try {
      diedAt = await waitForDeath(pid, 10_000);
    } finally {
      redis.resume();
    }
    const result = await holder.result;
    console.log(`child (${onSignal} on SIGTERM) gone ${expiresAt - diedAt}ms before the key's server-side expiry`);

    expect(result.code).toBe(76);
    expect(diedAt).toBeLessThan(expiresAt);
    expect(events(result.stderr, 'renewed').length).toBe(renewalsBeforePause);
    expect(onlyEvent(result.stderr, 'lost').reason).toBe('expiring');
    expect(signalsSeen(dir)).toEqual(signals);
    expect(existsSync(join(dir, 'done'))).toBe(false);
    expect(await client.exists(lockKey)).toBe(0);
    if (onSignal === 'ignore') {
      // The SIGKILL comes a scheduling margin before the local deadline (ttl - drift after the
      // last renewal began, which was before its event): half of it is allowed for a late timer.
      const kill = events(result.stderr, 'signal').find((e) => e.signal === 'SIGKILL')!;
      const sinceRenewal = kill.ts_ms - events(result.stderr, 'renewed').at(-1)!.ts_ms;
      console.log(
        `SIGKILL ${Math.round(sinceRenewal)}ms after the last renewal (deadline ${5_000 - driftMs(5_000)}ms, margin ${schedulingMarginMs(5_000)}ms)`,
      );
      expect(sinceRenewal).toBeLessThan(5_000 - driftMs(5_000) - schedulingMarginMs(5_000) / 2);
    }
  });
});
