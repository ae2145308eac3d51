// dlock on a 3-member etcd cluster under faults (issue 34): the leader SIGKILLed and the member
// dlock talks to SIGSTOPped while a holder runs (the lease survives, the command is unaffected, no
// second holder), a holder cut off from every member past its lease (its command stopped before
// another holder starts), and a dlock SIGSTOPped past its lease (the documented limit: a second
// holder starts meanwhile; on SIGCONT the first stops its command at once). Time bounds come from
// the events' own ts_ms. Also the first endpoint behind a TCP proxy that resets, refuses or drops
// replies: dlock fails over to the others.

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import type { EtcdCluster, EtcdServer } from '../../support/etcd-server.mjs';
import { TcpProxy } from '../../support/tcp-proxy.mjs';
import { waitUntil } from '../../support/wait-until.mjs';
import { dlock } from '../helpers/cli.js';
import { useEtcdCluster } from '../helpers/etcd.js';
import { events, hold, type Held, isAlive, onlyEvent, signalsSeen, waitForDeath } from '../fixtures/observe.js';

let cluster: EtcdCluster;
useEtcdCluster((started) => (cluster = started));

/** dlock's URL for the cluster with `first` as the endpoint it talks to first. */
const urlWithFirst = (first: EtcdServer) =>
  `etcd://${[first, ...cluster.members.filter((member) => member !== first)].map((m) => m.endpoint).join(',')}`;

/** Resolves once `holder` has renewed its lease at or after `sinceMs` (wall clock, as ts_ms); fails with its stderr. */
async function renewedSince(holder: Held, sinceMs: number): Promise<void> {
  await waitUntil(
    `a renewal at or after ${sinceMs}`,
    () => events(holder.stderr(), 'renewed').some((e) => e.ts_ms >= sinceMs),
    { timeoutMs: 15_000 },
  ).catch((error: Error) => {
    throw new Error(`${error.message}; the holder's stderr:\n${holder.stderr()}`);
  });
}

/** The holder ended normally: its command exited 0, no loss, the lock released. */
async function expectUnaffected(holder: Held): Promise<void> {
  holder.stop();
  const result = await holder.result;
  expect(result.code, result.stderr).toBe(0);
  expect(events(result.stderr, 'lost')).toEqual([]);
  expect(onlyEvent(result.stderr, 'released').released).toBe(true);
  expect(existsSync(join(holder.dir, 'done'))).toBe(true);
}

test('the leader SIGKILLed while a holder runs: its command completes, a waiter from before gets the lock only after the release', async () => {
  const leader = await cluster.leader();
  // The leader is the endpoint dlock talks to: it must fail over as well.
  const url = urlWithFirst(leader);
  // 10 s: dlock gives a lease up about ttl/3 before it runs out, and a 3 s lease is given up before
  // a loaded machine has elected the new leader (keepalives to a member without a leader hang).
  const holder = hold('leader-kill', { redis: url, flags: ['-t', '10s'] });
  const { pid, env } = await holder.child();
  const waiter = hold('leader-kill', { redis: url });
  await waiter.waitFor('"event":"wait-status"');
  const killedAt = Date.now();
  await leader.stop();
  try {
    // Renewed after the kill: through another member, to the new leader (the old one is gone).
    await renewedSince(holder, killedAt + 100);
    expect(isAlive(pid)).toBe(true);
    expect(existsSync(join(waiter.dir, 'pid'))).toBe(false);
    await expectUnaffected(holder);
    const released = onlyEvent(holder.stderr(), 'released');
    const next = await waiter.child();
    const acquired = onlyEvent(waiter.stderr(), 'acquired');
    expect(acquired.ts_ms).toBeGreaterThanOrEqual(released.ts_ms);
    expect(BigInt(next.env.DLOCK_FENCING_TOKEN)).toBeGreaterThan(BigInt(env.DLOCK_FENCING_TOKEN));
    console.log(
      `leader killed; the holder renewed through the new leader; the waiter acquired ${Math.round(acquired.ts_ms - released.ts_ms)}ms after the release`,
    );
    waiter.stop();
    expect((await waiter.result).code).toBe(0);
  } finally {
    await leader.launch();
  }
});

// [which member, --ttl, how long after the pause a renewal must have come back]: a follower's
// pause is ridden out past the TTL; a paused leader needs an election first (see above for 10 s).
test.for([
  ['a follower', 3_000, 3_000],
  ['the leader', 10_000, 100],
] as const)(
  'the member dlock talks to SIGSTOPped (%s): dlock fails over and keeps the lease, the command is unaffected',
  async ([which, ttlMs, renewedAfterMs]) => {
    const leader = await cluster.leader();
    const paused = which === 'the leader' ? leader : cluster.members.find((member) => member !== leader)!;
    const holder = hold(`paused-${which.replace(' ', '-')}`, {
      redis: urlWithFirst(paused),
      flags: ['-t', `${ttlMs}ms`],
    });
    const { pid } = await holder.child();
    const pausedAt = Date.now();
    paused.pause();
    try {
      await renewedSince(holder, pausedAt + renewedAfterMs);
      expect(isAlive(pid)).toBe(true);
      // Still held, as the other members see it.
      const others = `etcd://${cluster.members
        .filter((m) => m !== paused)
        .map((m) => m.endpoint)
        .join(',')}`;
      const contender = await dlock([
        'run',
        '--redis',
        others,
        '-n',
        `paused-${which.replace(' ', '-')}`,
        '--',
        'true',
      ]);
      expect(contender.code, contender.stderr).toBe(75);
    } finally {
      paused.resume();
    }
    await expectUnaffected(holder);
  },
);

// The first endpoint reached through a proxy that drops: connections reset and new ones refused
// (a crashed load balancer), or replies lost after etcd acted on the requests.
test.for(['resets and refuses connections', 'drops replies'] as const)(
  'the first endpoint behind a proxy that %s: dlock fails over and keeps the lease past its TTL',
  async (fault) => {
    const proxy = await TcpProxy.start(cluster.members[0].port);
    try {
      const others = cluster.members.slice(1).map((member) => member.endpoint);
      const url = `etcd://${[`127.0.0.1:${proxy.port}`, ...others].join(',')}`;
      const ttlMs = 3_000;
      const holder = hold(`dropped-${fault.split(' ')[0]}`, { redis: url, flags: ['-t', `${ttlMs}ms`] });
      const { pid } = await holder.child();
      const faultAt = Date.now();
      if (fault === 'drops replies') proxy.dropReplies();
      else {
        proxy.refuse(true);
        proxy.reset();
      }
      await renewedSince(holder, faultAt + ttlMs);
      expect(isAlive(pid)).toBe(true);
      await expectUnaffected(holder);
    } finally {
      proxy.resume();
      await proxy.close();
    }
  },
);

test('a holder cut off from every member past its lease: its command is stopped (76) before a second holder starts', async () => {
  const proxy = await TcpProxy.start(cluster.members[0].port);
  try {
    const first = hold('cut-off', { redis: `etcd://127.0.0.1:${proxy.port}`, flags: ['-t', '2s'] });
    const { pid, env } = await first.child();
    const second = hold('cut-off', { redis: cluster.url, flags: ['--wait', '20s'] });
    await second.waitFor('"event":"wait-status"');
    proxy.stall();
    const next = await second.child();
    // The second's command runs: the first's is gone already.
    expect(isAlive(pid)).toBe(false);
    const acquired = onlyEvent(second.stderr(), 'acquired');
    const result = await first.result;
    expect(result.code, result.stderr).toBe(76);
    expect(signalsSeen(first.dir)).toEqual(['TERM']);
    const lost = onlyEvent(result.stderr, 'lost');
    const stopped = onlyEvent(result.stderr, 'released');
    console.log(
      `cut off: lost at ${Math.round(acquired.ts_ms - lost.ts_ms)}ms and the command gone ${Math.round(acquired.ts_ms - stopped.ts_ms)}ms before the second holder acquired`,
    );
    expect(lost.ts_ms).toBeLessThan(acquired.ts_ms);
    expect(stopped.ts_ms).toBeLessThan(acquired.ts_ms);
    expect(BigInt(next.env.DLOCK_FENCING_TOKEN)).toBeGreaterThan(BigInt(env.DLOCK_FENCING_TOKEN));
    second.stop();
    expect((await second.result).code).toBe(0);
  } finally {
    proxy.resume();
    await proxy.close();
  }
});

test('a dlock SIGSTOPped past its lease: a second holder starts meanwhile (fencing covers it); on SIGCONT the first stops its command at once, 76', async () => {
  const first = hold('frozen', { redis: cluster.url, flags: ['-t', '2s'] });
  const { pid, env } = await first.child();
  const second = hold('frozen', { redis: cluster.url, flags: ['--wait', '20s'] });
  await second.waitFor('"event":"wait-status"');
  first.process.kill('SIGSTOP');
  let contAt: number;
  try {
    const next = await second.child();
    // The documented limit: nobody stops a command under a frozen dlock; its fence is the lower one.
    expect(isAlive(pid)).toBe(true);
    expect(BigInt(next.env.DLOCK_FENCING_TOKEN)).toBeGreaterThan(BigInt(env.DLOCK_FENCING_TOKEN));
  } finally {
    contAt = Date.now();
    first.process.kill('SIGCONT');
  }
  const goneAt = await waitForDeath(pid);
  const result = await first.result;
  expect(result.code, result.stderr).toBe(76);
  const signal = onlyEvent(result.stderr, 'signal');
  expect(signal.reason).toBe('lost');
  console.log(
    `SIGCONT: the command signalled after ${Math.round(signal.ts_ms - contAt)}ms, gone after ${goneAt - contAt}ms`,
  );
  expect(signal.ts_ms - contAt).toBeLessThan(500);
  expect(goneAt - contAt).toBeLessThan(1_000);
  expect(existsSync(join(first.dir, 'done'))).toBe(false);
  second.stop();
  expect((await second.result).code).toBe(0);
});
