// --slots n (docs/reference/waiting-in-line.md): at most n holders, always n while work is queued, each
// with its own slot (DLOCK_SLOT, 0 … n−1) and its own fencing token in grant order; a holder
// that dies frees only its own slot, after its TTL; a key in use otherwise is 64; release
// --force --slot removes one holder; renewal and reentrancy work for every holder. Real
// redis-server and dlock processes; times from the processes' own timestamps.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { expect, test } from 'vitest';
import { RedisServer } from '../../support/redis-server.mjs';
import {
  events,
  hold,
  isAlive,
  signalsSeen,
  spawnDlock,
  tempDir,
  waitForDeath,
  type Held,
} from '../fixtures/observe.js';
import { cleanEnv, DLOCK, dlock } from '../helpers/cli.js';
import { eventOf, inLine, lineOf, overlap, runIn, section, sections } from '../helpers/line.js';
import { waitForMoreEvents } from '../helpers/redlock.js';
import { useRedisServer } from '../helpers/server.js';

let redis: RedisServer;
let client: Redis;
useRedisServer((server) => {
  redis = server;
  client = server.client();
});

/** A hold.sh holder of one of `slots` slots of `key`, with its slot once its child runs. */
async function holder(
  key: string,
  slots: number,
  flags: string[] = [],
): Promise<Held & { slot: number; token: string; childPid: number }> {
  const held = hold(key, { redis: redis.url, flags: ['--slots', String(slots), ...flags] });
  const { pid, env } = await held.child();
  return Object.assign(held, { slot: Number(env.DLOCK_SLOT), token: env.DLOCK_TOKEN, childPid: pid });
}

/** How long after one job ends another one, queued, may take its place (dlock notices the exit, releases, wakes, spawns). */
const HANDOVER_SLACK_MS = 1_000;

test('--slots 3, 12 concurrent 200ms jobs: never more than 3 run, always 3 while work is queued, distinct slots, fences in grant order', async () => {
  const log = join(tempDir(), 'sections');
  // Three holders fill the slots so that all 12 jobs are in line before the first runs.
  const blockers = await Promise.all([0, 1, 2].map(() => holder('sem', 3)));
  expect(blockers.map((b) => b.slot).sort()).toEqual([0, 1, 2]);
  const jobs = Array.from({ length: 12 }, (_, i) =>
    runIn(redis.url, 'sem', ['--slots', '3'], section(log, `job${i}`, 0.2)),
  );
  await Promise.all(jobs.map(inLine));
  const line = await lineOf(client, 'sem');
  expect(line).toHaveLength(12);

  for (const blocker of blockers) blocker.stop();
  const results = await Promise.all([...blockers, ...jobs].map((j) => j.result));
  expect(results.map((r) => r.code)).toEqual(Array(15).fill(0));

  const ran = sections(log);
  expect(ran).toHaveLength(12);
  // Never more than 3 at once (at each start, count who runs).
  const running = (t: number) => ran.filter((s) => s.startMs <= t && t < s.endMs);
  const most = Math.max(...ran.map((s) => running(s.startMs).length));
  expect(most).toBeLessThanOrEqual(3);
  // Always 3 while work is queued: the k-th job to end is followed by the (k+3)-th to start.
  const starts = ran.map((s) => s.startMs).sort((a, b) => a - b);
  const ends = ran.map((s) => s.endMs).sort((a, b) => a - b);
  const handovers = ends.slice(0, 9).map((end, k) => starts[k + 3] - end);
  console.log(
    `--slots 3, 12 jobs of 200ms: at most ${most} at once; one ending → the next starting: ${handovers.map((g) => `${g.toFixed(0)}ms`).join(', ')}`,
  );
  for (const gap of handovers) {
    expect(gap).toBeGreaterThanOrEqual(0);
    expect(gap).toBeLessThanOrEqual(HANDOVER_SLACK_MS);
  }
  // Slots within 0..2, distinct among the jobs running at the same time.
  for (const s of ran) expect([0, 1, 2]).toContain(s.slot);
  for (const a of ran) for (const b of ran) if (a !== b && overlap(a, b)) expect(a.slot).not.toBe(b.slot);
  // Fences unique and increasing in grant order. Waiters admitted together (several slots free
  // at once) may enter in either order, but one 3 places behind another in line is admitted
  // only once that one has left the line: it got the later grant, so the higher fence.
  const fences = line.map((token) => ran.find((s) => s.token === token)!.fence);
  expect(new Set(fences).size).toBe(12);
  for (let i = 0; i < fences.length; i++)
    for (let j = i + 3; j < fences.length; j++)
      expect(fences[j], `fences in line order: ${fences.join(' ')}`).toBeGreaterThan(fences[i]);
  const acquired = results.slice(3).map((r) => eventOf(r, 'acquired'));
  expect(acquired.map((a) => a.slot).sort()).toEqual(ran.map((s) => s.slot).sort());
  expect(await client.exists('dlock:{sem}', 'dlock:{sem}:holders', 'dlock:{sem}:line')).toBe(0);
});

test('a SIGKILLed holder frees only its own slot, after its TTL; the others keep theirs', async () => {
  const ttlMs = 2_000;
  const held = await Promise.all([0, 1, 2].map(() => holder('sem-kill', 3, ['-t', `${ttlMs}ms`])));
  const bySlot = [0, 1, 2].map((slot) => held.find((h) => h.slot === slot)!);
  const victim = bySlot[1];

  const killedAt = Date.now();
  victim.process.kill('SIGKILL');
  process.kill(victim.childPid, 'SIGKILL');
  await waitForDeath(victim.process.pid!);
  const next = await holder('sem-kill', 3, ['-t', `${ttlMs}ms`]);
  expect(next.slot).toBe(1);

  const victimEvents = events(victim.stderr()).filter((e) => e.event === 'acquired' || e.event === 'renewed');
  const lastRenewed = victimEvents.at(-1)!.ts_ms;
  const acquired = eventOf(next.stderr(), 'acquired').ts_ms;
  console.log(
    `SIGKILLed holder of slot 1 (TTL ${ttlMs}ms): slot 1 taken again ${(acquired - killedAt).toFixed(0)}ms after the kill, ${(acquired - lastRenewed).toFixed(0)}ms after its last renewal`,
  );
  // Not before its lease ran out: its lease began when its last renewal ran, a little before
  // that renewal's event was logged (freed at the kill, it would be about ttl/3 at most) ...
  expect(acquired - lastRenewed).toBeGreaterThanOrEqual(ttlMs - 500);
  // ... and soon after: the head of the line polls when a holder's lease would end.
  expect(acquired - killedAt).toBeLessThanOrEqual(ttlMs + 1_500);

  // The other two kept their slots, ran throughout, and were never signalled.
  for (const other of [bySlot[0], bySlot[2]]) {
    expect(await client.hget('dlock:{sem-kill}', `s:${other.slot}`)).toBe(other.token);
    expect(isAlive(other.childPid)).toBe(true);
    expect(signalsSeen(other.dir)).toEqual([]);
  }
  expect(await client.hget('dlock:{sem-kill}', 's:1')).toBe(next.token);
  for (const h of [bySlot[0], bySlot[2], next]) h.stop();
  for (const h of [bySlot[0], bySlot[2], next]) {
    const result = await h.result;
    expect(result.code, result.stderr).toBe(0);
    expect(events(result.stderr, 'lost')).toEqual([]);
  }
});

test('a key in use with another slot count or mode is 64, saying how it is in use; nothing waits or queues', async () => {
  const three = await holder('mixed', 3);
  const wrongN = await dlock(['run', '--redis', redis.url, '--slots', '2', '--wait', '20s', 'mixed', '--', 'true']);
  expect(wrongN.code).toBe(64);
  expect(wrongN.stderr).toBe(
    'dlock: mixed is in use with --slots 3 (1 holding); this run asked for --slots 2: use the same --slots on every dlock of one key\n',
  );
  const plain = await dlock(['run', '--redis', redis.url, '--wait', '20s', 'mixed', '--', 'true']);
  expect(plain.code).toBe(64);
  expect(plain.stderr).toMatch(
    /^dlock: mixed is in use with --slots 3 \(1 holding\); this run asked for a lock without --slots: [^\n]*\n$/,
  );
  const json = await dlock(['run', '--redis', redis.url, '--log-format', 'json', '--shared', 'mixed', '--', 'true']);
  expect(json.code).toBe(64);
  expect(JSON.parse(json.stderr)).toMatchObject({
    event: 'error',
    message: expect.stringMatching(/^mixed is in use with --slots 3 \(1 holding\)/),
  });
  expect(await lineOf(client, 'mixed')).toEqual([]);
  expect(isAlive(three.childPid)).toBe(true);
  three.stop();
  expect((await three.result).code).toBe(0);

  const alone = hold('mixed', { redis: redis.url });
  await alone.child();
  const slots = await dlock(['run', '--redis', redis.url, '--slots', '3', '--wait', '20s', 'mixed', '--', 'true']);
  expect(slots.code).toBe(64);
  expect(slots.stderr).toBe(
    'dlock: mixed is in use as a lock (one holder at a time) (1 holding); this run asked for --slots 3: use the same --slots on every dlock of one key\n',
  );
  alone.stop();
  expect((await alone.result).code).toBe(0);

  const both = await dlock(['run', '--redis', redis.url, '--shared', '--slots', '2', 'mixed', '--', 'true']);
  expect(both.code).toBe(64);
  expect(both.stderr).toMatch(/^dlock: --shared and --slots: choose one[^\n]*\n$/);
  const redlock = await dlock([
    'run',
    '--redis',
    redis.url,
    '--redis',
    'redis://127.0.0.1:1',
    '--slots',
    '2',
    'mixed',
    '--',
    'true',
  ]);
  expect(redlock.code).toBe(64);
  expect(redlock.stderr).toMatch(/^dlock: --slots needs one Redis [^\n]*not a Redlock quorum of 2[^\n]*\n$/);
  expect(await client.exists('dlock:{mixed}', 'dlock:{mixed}:holders', 'dlock:{mixed}:line')).toBe(0);
});

test('release --force --slot 1 removes only that holder (its command is stopped, 76); without --slot it removes all', async () => {
  const held = await Promise.all([0, 1, 2].map(() => holder('force-slot', 3, ['-t', '2s'])));
  const bySlot = [0, 1, 2].map((slot) => held.find((h) => h.slot === slot)!);

  const forced = await dlock(['release', '--force', '--slot', '1', '--redis', redis.url, 'force-slot']);
  expect(forced.code, forced.stderr).toBe(0);
  expect(forced.stdout).toContain(`pid ${bySlot[1].process.pid}`);
  expect(forced.stdout).not.toContain(`pid ${bySlot[0].process.pid}`);
  const removed = await bySlot[1].result;
  expect(removed.code, removed.stderr).toBe(76);
  expect(eventOf(removed, 'lost')).toMatchObject({ reason: 'refused' });
  expect(signalsSeen(bySlot[1].dir)).toEqual(['TERM']);
  // The others are renewed after that, and were never signalled.
  await Promise.all([bySlot[0], bySlot[2]].map((h) => waitForMoreEvents(h, 'renewed', 1)));
  for (const other of [bySlot[0], bySlot[2]]) {
    expect(isAlive(other.childPid)).toBe(true);
    expect(signalsSeen(other.dir)).toEqual([]);
  }

  const all = await dlock(['release', '--force', '--redis', redis.url, 'force-slot']);
  expect(all.code, all.stderr).toBe(0);
  for (const other of [bySlot[0], bySlot[2]]) {
    expect(all.stdout).toContain(`pid ${other.process.pid}`);
    expect((await other.result).code).toBe(76);
    expect(signalsSeen(other.dir)).toEqual(['TERM']);
  }
});

test('release --force --now on a full semaphore opens it at once: the first in line enters', async () => {
  const ttlMs = 6_000;
  const held = await Promise.all([0, 1].map(() => holder('force-now', 2, ['-t', `${ttlMs}ms`, '--on-lost', 'ignore'])));
  const waiter = runIn(redis.url, 'force-now', ['--slots', '2'], ['true']);
  await inLine(waiter);
  const forced = await dlock([
    'release',
    '--force',
    '--now',
    '--log-format',
    'json',
    '--redis',
    redis.url,
    'force-now',
  ]);
  expect(forced.code, forced.stderr).toBe(0);
  const forcedAt = Math.min(...events(forced.stderr, 'force-released').map((e) => e.ts_ms));
  const entered = await waiter.result;
  expect(entered.code, entered.stderr).toBe(0);
  const gap = eventOf(entered, 'acquired').ts_ms - forcedAt;
  console.log(
    `release --force --now: the waiter acquired ${gap.toFixed(1)}ms after the force-released event (the holders' TTL is ${ttlMs}ms)`,
  );
  expect(gap).toBeLessThan(1_000);
  // The removed holders' dlocks notice at their next renewal (their commands ignore the loss here).
  await Promise.all(held.map((h) => h.waitFor('"event":"lost"')));
  for (const h of held) h.stop();
  for (const h of held) expect((await h.result).code).toBe(76);
});

test('holders of --slots and --shared keep their hold past 3×TTL; -n contenders are busy throughout', async () => {
  const ttlMs = 2_000;
  const slotted = await Promise.all([0, 1].map(() => holder('renew-slots', 2, ['-t', `${ttlMs}ms`])));
  const shared = hold('renew-shared', { redis: redis.url, flags: ['--shared', '-t', `${ttlMs}ms`] });
  await shared.child();
  const all = [...slotted, shared];
  const since = all.map((h) => eventOf(h.stderr(), 'acquired').ts_ms);
  const heldLongEnough = () =>
    all.every((h, i) => events(h.stderr(), 'renewed').some((e) => e.ts_ms - since[i] > 3 * ttlMs));

  const contenders: number[] = [];
  const running = () => all.every((h) => h.process.exitCode === null && h.process.signalCode === null);
  while (!heldLongEnough() && running() && !contenders.some((code) => code !== 75)) {
    const [full, exclusive] = await Promise.all([
      dlock(['run', '--redis', redis.url, '--slots', '2', '-n', 'renew-slots', '--', 'true']),
      dlock(['run', '--redis', redis.url, '-n', 'renew-shared', '--', 'true']),
    ]);
    contenders.push(full.code!, exclusive.code!);
  }
  console.log(
    `holders ${heldLongEnough() ? 'renewed past' : 'NOT renewed past'} 3×TTL (${3 * ttlMs}ms); ${contenders.length} -n contenders meanwhile`,
  );
  expect(running()).toBe(true);
  expect(contenders.length).toBeGreaterThan(0);
  expect(contenders).toEqual(contenders.map(() => 75));
  for (const h of all) expect(isAlive((await h.child()).pid)).toBe(true);
  for (const h of all) h.stop();
  for (const h of all) {
    const result = await h.result;
    expect(result.code, result.stderr).toBe(0);
    expect(events(result.stderr, 'lost')).toEqual([]);
    expect(eventOf(result, 'released')).toMatchObject({ released: true });
  }
}, 90_000);

/**
 * `dlock run <flags> <key> -- sh -c <script>`: the script runs `dlock run <flags> --wait 5s
 * <key>` inside once `go` exists (at once without `go`), then reports what both saw. A nested
 * run that is not recognised as running under its parent waits in line behind its own parent
 * (deadlock): --wait 5s turns that into exit 75.
 */
function nested(key: string, flags: string[], go?: string) {
  const inner = `"$0" run --redis ${redis.url} ${flags.join(' ')} --wait 5s ${key} -- sh -c 'echo "inner $DLOCK_FENCING_TOKEN \${DLOCK_SLOT:--}"'`;
  const script = [
    ...(go ? [`while [ ! -e ${go} ]; do sleep 0.01; done`] : []),
    inner,
    'echo "inner exit $?"',
    'echo "outer $DLOCK_FENCING_TOKEN ${DLOCK_SLOT:--}"',
  ].join('; ');
  return spawnDlock(
    ['run', '--redis', redis.url, '--log-format', 'json', ...flags, key, '--', 'sh', '-c', script, DLOCK],
    { env: cleanEnv() },
  );
}

test('reentrancy: a nested dlock run --slots 3 inside the holder of slot 2 of a full semaphore runs under it', async () => {
  const others = await Promise.all([0, 1].map(() => holder('re-slots', 3)));
  expect(others.map((o) => o.slot).sort()).toEqual([0, 1]);
  const outer = nested('re-slots', ['--slots', '3']);
  const result = await outer.result;
  expect(result.code, result.stderr).toBe(0);
  const fence = eventOf(result, 'acquired').fence;
  expect(result.stdout.trim().split('\n')).toEqual([`inner ${fence} 2`, 'inner exit 0', `outer ${fence} 2`]);
  for (const o of others) o.stop();
  for (const o of others) expect((await o.result).code).toBe(0);
});

test('reentrancy: a nested dlock run --shared inside a shared holder runs under it, also with a writer queued behind it', async () => {
  const first = hold('re-shared', { redis: redis.url, flags: ['--shared'] });
  await first.child();
  const go = join(tempDir(), 'go');
  const outer = nested('re-shared', ['--shared'], go);
  await outer.waitFor('"event":"acquired"');
  const writer = runIn(redis.url, 're-shared', [], ['true']);
  await inLine(writer);
  writeFileSync(go, '');
  const result = await outer.result;
  expect(result.code, result.stderr).toBe(0);
  const fence = eventOf(result, 'acquired').fence;
  expect(result.stdout.trim().split('\n')).toEqual([`inner ${fence} -`, 'inner exit 0', `outer ${fence} -`]);
  first.stop();
  expect((await first.result).code).toBe(0);
  expect((await writer.result).code).toBe(0);
});
