// The faults themselves: each one is done and healed while a victim holds the lock, and
// returns a record for results.json ({ at, healedAt?, lockEndsAt?, ... }); see faults.mjs.

import { sleep, wallMs } from './procs.mjs';

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
export async function sigstopDlock({ victim, random, ttlMs }) {
  const pauseMs = random.between(4, 4.5) * ttlMs;
  const stop = { from: wallMs(), to: undefined };
  victim.stops.push(stop);
  victim.signalWith('SIGSTOP');
  try {
    await sleep(pauseMs);
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
  const goneAt = Math.max(...(await Promise.all(victims.map((s) => s.kill()))));
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
export const restartRedis = (wipes) => ({ servers, random, ttlMs }) => restart(servers, random.between(0, 0.5) * ttlMs, wipes, 1);

/** FLUSHALL: the lock and its fence counter deleted under a holder. */
export async function flushall({ servers }) {
  const at = wallMs();
  await servers[0].command('FLUSHALL');
  return { at, lockEndsAt: wallMs() };
}

/** Stop 1..quorum random instances (a majority down makes renewal fail), then restart them. */
export const restartInstances = (wipes) => ({ servers, random, ttlMs, quorum }) =>
  restart(random.sample(servers, random.int(1, quorum)), random.between(0.3, 1.5) * ttlMs, wipes, quorum);
