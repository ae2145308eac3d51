// What the lock is for (docs/guarantees.md, docs/reference/waiting-in-line.md): one holder at a time, fencing tokens
// that only go up, a fast hand-over to a waiter, and nested runs on a held key.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { cleanEnv, DLOCK, dlock } from '../helpers/cli.js';
import { RedisServer } from '../../support/redis-server.mjs';
import {
  childEnv,
  childPid,
  CRITICAL,
  hold,
  onlyEvent,
  spawnDlock,
  tempDir,
  waitForDeath,
} from '../fixtures/observe.js';
import { useRedisServer } from '../helpers/server.js';

let redis: RedisServer;
useRedisServer((server) => (redis = server));

test('mutual exclusion: 20 concurrent runs of a read-sleep-write counter end at exactly 20, sections never overlap', async () => {
  const dir = tempDir();
  const counter = join(dir, 'counter');
  const log = join(dir, 'sections');
  const runs = Array.from({ length: 20 }, () =>
    dlock(['run', '--redis', redis.url, '-t', '5s', 'counter', '--', CRITICAL, counter, log]),
  );
  const results = await Promise.all(runs);
  expect(results.map((r) => r.code)).toEqual(Array(20).fill(0));
  expect(readFileSync(counter, 'utf8').trim()).toBe('20');

  const sections = readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .map((line) => line.split(' '))
    .map(([start, end, fence]) => ({ start: BigInt(start), end: BigInt(end), fence: BigInt(fence) }))
    .sort((a, b) => (a.start < b.start ? -1 : 1));
  expect(sections).toHaveLength(20);
  let gaps = 0n;
  for (let i = 1; i < sections.length; i++) {
    expect(sections[i].start).toBeGreaterThan(sections[i - 1].end);
    // Each holder got a higher token than the one before it.
    expect(sections[i].fence).toBeGreaterThan(sections[i - 1].fence);
    gaps += sections[i].start - sections[i - 1].end;
  }
  console.log(
    `20 critical sections, none overlapping; mean gap between one holder's end and the next one's start: ${Number(gaps / 19n) / 1e6}ms`,
  );
});

test('fencing tokens strictly increase across holders, also after an expiry and a forced release', async () => {
  const fences: bigint[] = [];
  const key = 'fence';
  const acquiredFence = (stderr: string) => BigInt(onlyEvent(stderr, 'acquired').fence!);

  // Two holders one after the other.
  for (let i = 0; i < 2; i++) {
    const result = await dlock(['run', '--redis', redis.url, '--log-format', 'json', key, '--', 'true']);
    expect(result.code).toBe(0);
    fences.push(acquiredFence(result.stderr));
  }

  // A holder SIGKILLed: nobody releases; the next holder gets the lock once the key expired.
  const killedDir = tempDir();
  // 2s, not 500ms: a lease that short could run out by itself when a loaded machine stalls dlock, before the SIGKILL.
  const killed = hold(key, { redis: redis.url, dir: killedDir, flags: ['-t', '2s'] });
  const killedPid = await childPid(killedDir);
  fences.push(BigInt((await childEnv(killedDir)).DLOCK_FENCING_TOKEN));
  killed.process.kill('SIGKILL');
  await waitForDeath(killedPid);
  expect(await redis.client().exists(`dlock:{${key}}`)).toBe(1);
  const afterExpiry = await dlock([
    'run',
    '--redis',
    redis.url,
    '--log-format',
    'json',
    '--wait',
    '5s',
    key,
    '--',
    'true',
  ]);
  expect(afterExpiry.code).toBe(0);
  fences.push(acquiredFence(afterExpiry.stderr));

  // A holder whose lock an operator breaks with release --force.
  const brokenDir = tempDir();
  // 3s: it notices at its next renewal (1s), and still holds when the release's dlock has started on a loaded machine.
  const broken = hold(key, { redis: redis.url, dir: brokenDir, flags: ['-t', '3s'] });
  await childPid(brokenDir);
  fences.push(BigInt((await childEnv(brokenDir)).DLOCK_FENCING_TOKEN));
  const release = await dlock(['release', '--force', '--redis', redis.url, key]);
  expect(release.code).toBe(0);
  const afterForce = spawnDlock([
    'run',
    '--redis',
    redis.url,
    '--log-format',
    'json',
    '--wait',
    '5s',
    key,
    '--',
    'true',
  ]);
  expect((await afterForce.result).code).toBe(0);
  fences.push(acquiredFence((await afterForce.result).stderr));
  expect((await broken.result).code).toBe(76);

  console.log(`fences: ${fences.join(' < ')}`);
  for (let i = 1; i < fences.length; i++) expect(fences[i]).toBeGreaterThan(fences[i - 1]);
  expect(await redis.client().get(`dlock:{${key}}:fence`)).toBe(String(fences.at(-1)));
});

test('a waiter starts within a few milliseconds of the holder releasing (pub/sub, not polling)', async () => {
  // The TTL is long, so the waiter's next re-poll is seconds away: only the release message
  // explains a fast hand-over.
  const gaps: number[] = [];
  for (let round = 0; round < 3; round++) {
    const dir = tempDir();
    const holder = hold('handover', { redis: redis.url, dir, flags: ['-t', '20s'] });
    await childPid(dir);
    const waiter = spawnDlock(['run', '--redis', redis.url, '--log-format', 'json', 'handover', '--', 'true']);
    await waiter.waitFor('"event":"waiting"');
    holder.stop();
    const [held, waited] = await Promise.all([holder.result, waiter.result]);
    expect(held.code).toBe(0);
    expect(waited.code).toBe(0);
    const released = onlyEvent(held.stderr, 'released');
    expect(released.released).toBe(true);
    gaps.push(onlyEvent(waited.stderr, 'acquired').ts_ms - released.ts_ms);
  }
  console.log(
    `hand-over, holder's "released" to waiter's "acquired": ${gaps.map((g) => `${g.toFixed(2)}ms`).join(', ')}`,
  );
  for (const gap of gaps) expect(gap).toBeLessThan(1_000);
});

test('reentrancy: dlock run K inside a child holding K runs at once, under the same fencing token', async () => {
  const env = cleanEnv({ DLOCK_REDIS_URL: redis.url });
  // Plain invocations, as a user would nest them; the outer one reports what it saw after.
  const script = [
    `"$0" run --log-format json nested -- sh -c 'echo "inner $DLOCK_FENCING_TOKEN"'`,
    'echo "inner exit $?"',
    'echo "outer $DLOCK_FENCING_TOKEN"',
    '"$0" status nested >/dev/null; echo "held after inner: $?"',
  ].join('; ');
  const outer = spawnDlock(['run', 'nested', '--', 'sh', '-c', script, DLOCK], { env });
  const timer = setTimeout(() => outer.process.kill('SIGKILL'), 15_000);
  const result = await outer.result;
  clearTimeout(timer);

  expect(result.code).toBe(0);
  const lines = result.stdout.trim().split('\n');
  const outerFence = lines.find((l) => l.startsWith('outer '))!.split(' ')[1];
  expect(outerFence).toMatch(/^\d+$/);
  expect(lines).toEqual([`inner ${outerFence}`, 'inner exit 0', `outer ${outerFence}`, 'held after inner: 0']);
  expect(onlyEvent(result.stderr, 'acquired')).toMatchObject({ reentrant: true, fence: outerFence });
  expect(await redis.client().exists('dlock:{nested}')).toBe(0);
  expect(await redis.client().get('dlock:{nested}:fence')).toBe(outerFence);
});

test('a nested run with a stale DLOCK_TOKEN (not the holder) is not reentrant: 76, it runs and takes nothing', async () => {
  const dir = tempDir();
  const holder = hold('not-nested', { redis: redis.url, dir });
  await childPid(dir);
  const env = cleanEnv({
    DLOCK_KEY: 'not-nested',
    DLOCK_TOKEN: '0123456789abcdef0123456789abcdef',
    DLOCK_FENCING_TOKEN: '1',
  });
  // The lock its environment names is not held by that token: gone under it, never taken anew.
  const result = await dlock(['run', '--redis', redis.url, '-n', 'not-nested', '--', 'true'], { env });
  expect(result.code, result.stderr).toBe(76);
  expect(result.stderr).toMatch(/^dlock: not-nested: the lock an enclosing dlock held .* is no longer held/);
  holder.stop();
  expect((await holder.result).code).toBe(0);
});
