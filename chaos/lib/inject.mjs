// The faults themselves: each one is done and healed while a victim holds the lock, and
// returns a record for results.json ({ at, healedAt?, lockEndsAt?, ... }); see faults.mjs.

import { waitUntil } from '../../support/wait-until.mjs';
import { sleep, wallMs } from './procs.mjs';
import { killServer } from './redis.mjs';

const round = (ms) => Math.round(ms);

/** SIGKILL the victim's dlock mid-hold: its child must die with it (parent-death signal). */
export async function sigkillDlock({ victim }) {
  const at = wallMs();
  victim.killedAt = at;
  victim.signalWith('SIGKILL');
  await victim.exited;
  return { at, dlockPid: victim.pid, goneAt: victim.exitedAt };
}

/** A GC pause: dlock frozen well past its TTL while its child runs on; the fence is what protects the resource. */
export async function sigstopDlock({ victim, section, random, ttlMs }) {
  // Longer than the victim's hold (4 TTLs), and until its child has written: the child writes
  // while its dlock is frozen, after the next holder (in at about 1-2 TTLs) has written with a
  // newer token (the resource tells it when: victimWritesAfterNewer).
  const pauseMs = random.between(5, 5.5) * ttlMs;
  const stop = { from: wallMs(), to: undefined };
  victim.stops.push(stop);
  victim.signalWith('SIGSTOP');
  try {
    await sleep(pauseMs);
    const wrote = () => section.writes.length > 0 || section.closedAt !== undefined;
    await waitUntil("the paused holder's child to write", wrote, { timeoutMs: 16 * ttlMs, everyMs: 10 }).catch(
      () => {},
    );
  } finally {
    victim.signalWith('SIGCONT');
    stop.to = wallMs();
  }
  return { at: stop.from, healedAt: stop.to, pausedMs: round(stop.to - stop.from), dlockPid: victim.pid };
}

/** SIGSTOP the (single) server past the TTL: renewals time out, dlock must stop its child before the key expires. */
export async function sigstopRedis({ servers, random, ttlMs }) {
  const [server] = servers;
  const pauseMs = random.between(1.5, 2.5) * ttlMs;
  const at = wallMs();
  server.pause();
  try {
    await sleep(pauseMs);
  } finally {
    server.resume();
  }
  const healedAt = wallMs();
  return { at, healedAt, pausedMs: round(healedAt - at) };
}

/** SIGKILL `victims`, keep them down a while, start them again on the same ports and directories. */
async function restart(victims, downMs, wipes, quorum) {
  const at = wallMs();
  const goneAt = Math.max(...(await Promise.all(victims.map(killServer))));
  await sleep(downMs);
  await Promise.all(victims.map((s) => s.launch()));
  const healedAt = wallMs();
  return {
    at,
    healedAt,
    downMs: round(healedAt - at),
    instances: victims.map((s) => s.port),
    // Without persistence the keys are gone with the process; with fewer than a quorum gone
    // the lock lives on the others.
    lockEndsAt: wipes && victims.length >= quorum ? goneAt : undefined,
  };
}

/** Restart the single server; `wipes` when it has no persistence (the lock and the counter are gone). */
export const restartRedis =
  (wipes) =>
  ({ servers, random, ttlMs }) =>
    restart(servers, random.between(0, 0.5) * ttlMs, wipes, 1);

/** FLUSHALL: the lock and its fence counter deleted under a holder. */
export async function flushall({ servers }) {
  const at = wallMs();
  await servers[0].command('FLUSHALL');
  return { at, lockEndsAt: wallMs() };
}

/** Stop 1..quorum random instances (a majority down makes renewal fail), then restart them. */
export const restartInstances =
  (wipes) =>
  ({ servers, random, ttlMs, quorum }) =>
    restart(random.sample(servers, random.int(1, quorum)), random.between(0.3, 1.5) * ttlMs, wipes, quorum);

/** Every reply 0.1 TTL late for 2-3 TTLs: renewals take longer, and must still succeed in time. */
export async function proxyDelay({ topology, random, ttlMs }) {
  const { proxy } = topology;
  const delayMs = Math.round(0.1 * ttlMs);
  const at = wallMs();
  proxy.delay(delayMs);
  try {
    await sleep(random.between(2, 3) * ttlMs);
  } finally {
    proxy.delay(0);
  }
  return { at, healedAt: wallMs(), delayMs };
}

/** Hold all traffic 1.5-2.5 TTLs (renewals hang past the deadline), then deliver it. */
export async function proxyStall({ topology, random, ttlMs }) {
  const { proxy } = topology;
  const at = wallMs();
  proxy.stall();
  try {
    await sleep(random.between(1.5, 2.5) * ttlMs);
  } finally {
    proxy.resume();
  }
  const healedAt = wallMs();
  return { at, healedAt, stalledMs: round(healedAt - at) };
}

/** Drop replies 1.5-2.5 TTLs: the server renews, dlock never hears it, and must stop its child. */
export async function proxyDropReplies({ topology, random, ttlMs }) {
  const { proxy } = topology;
  const at = wallMs();
  proxy.dropReplies();
  try {
    await sleep(random.between(1.5, 2.5) * ttlMs);
  } finally {
    proxy.resume();
  }
  const healedAt = wallMs();
  return { at, healedAt, droppedMs: round(healedAt - at) };
}

const STALL_MS = 120;

/**
 * Right after a renewal, stall the link (so no renewal succeeds again) and SIGSTOP the victim's
 * dlock for 120 ms, from 60 ms before its kill deadline (the last renewal read + ttl - drift -
 * scheduling margin: src/timing.ts) to 60 ms after; then let it go and heal the link once
 * it has exited.
 */
export async function stallDlockAtDeadline({ topology, victim, ttlMs }) {
  const { proxy } = topology;
  const seen = victim.events.filter((e) => e.event === 'renewed' || e.event === 'acquired').length;
  const renewed = await waitUntil(
    'a renewal',
    () => victim.events.filter((e) => e.event === 'renewed' || e.event === 'acquired')[seen],
    { timeoutMs: 2 * ttlMs, everyMs: 5 },
  ).catch(() => undefined);
  if (!renewed || victim.done) return { at: wallMs(), skipped: 'the victim did not renew' };
  proxy.stall();
  const killAt = renewed.received_ms + ttlMs - (Math.ceil(ttlMs / 100) + 2) - Math.min(200, Math.floor(ttlMs / 10));
  await sleep(killAt - STALL_MS / 2 - wallMs());
  const stop = { from: wallMs(), to: undefined };
  victim.stops.push(stop);
  victim.signalWith('SIGSTOP');
  try {
    await sleep(STALL_MS);
  } finally {
    victim.signalWith('SIGCONT');
    stop.to = wallMs();
  }
  await Promise.race([victim.exited, sleep(2 * ttlMs)]);
  proxy.resume();
  return {
    at: stop.from,
    healedAt: wallMs(),
    stoppedMs: round(stop.to - stop.from),
    killDeadlineMs: round(killAt - stop.from),
    reported: victim.events.some((e) => e.event === 'stalled'),
  };
}
