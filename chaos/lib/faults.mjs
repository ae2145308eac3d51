// The fault kinds. Each one is a row of the report and a phase of the run: its own Redis
// topology, its own key and a fresh fenced resource, so that what one fault does (a rolled
// back counter) cannot be blamed on another.
//
// A kind says what the SPEC (Guarantees) promises under it, and how to inject it while a
// victim holds the lock:
//   name, title        the row label and a sentence for the report
//   promises           { tokens, expiry }: tokens strictly increase and no stale write is
//                      accepted / while dlock lives its child never runs past the lock's expiry.
//                      (The child dying with a SIGKILLed dlock is promised for every kind.)
//   topology(options)  start the servers: { urls, servers, close() }
//   dlockArgs          extra `dlock run` options for this kind
//   victimHoldTtls     how long the victim's child holds (in TTLs): longer than one TTL, so
//                      the lock must be renewed across the fault
//   injectAfterTtls    [min, max] delay from the victim's begin to the fault (in TTLs)
//   inject(ctx)        do the fault and heal it; ctx = { servers, victim (DlockRun), section,
//                      random, ttlMs, quorum }. Returns a record for results.json: { at,
//                      healedAt?, lockEndsAt?, ... }; lockEndsAt = a time by which every lock
//                      held at the fault had certainly ended (its keys deleted on a quorum).
//   available()        undefined, or why the kind cannot run here (the row says "skipped")

import { existsSync } from 'node:fs';
import { flushall, restartInstances, restartRedis, sigkillDlock, sigstopDlock, sigstopRedis } from './inject.mjs';
import { startServers } from './redis.mjs';

/** `count` independent servers with the given persistence; one URL each (Redlock when count > 1). */
function redisTopology(count, persistence) {
  return async () => {
    const servers = await startServers(count, persistence);
    return {
      urls: servers.map((s) => s.url),
      servers,
      async close() {
        await Promise.all(servers.map((s) => s.close()));
      },
    };
  };
}

const SENTINEL_PENDING = 'needs redis+sentinel:// support in dlock (issue 6): see the SENTINEL HOOK in chaos/lib/faults.mjs';

/** Every fault kind, in report order. `redlockInstances` is 3 or 5. */
export function faultKinds({ redlockInstances }) {
  const redlock = `redlock-${redlockInstances}`;
  return [
    {
      name: 'none',
      title: 'no fault (baseline)',
      promises: { tokens: true, expiry: true },
      topology: redisTopology(1, 'none'),
    },
    {
      name: 'dlock-sigkill',
      title: 'SIGKILL of a holding dlock',
      promises: { tokens: true, expiry: true },
      topology: redisTopology(1, 'none'),
      victimHoldTtls: 2,
      injectAfterTtls: [0.1, 1],
      inject: sigkillDlock,
    },
    {
      name: 'dlock-sigstop',
      title: 'SIGSTOP of a holding dlock for ~4 TTLs, then SIGCONT (a GC pause): its child runs on',
      // A frozen dlock cannot stop its child: only the fencing token protects the resource.
      promises: { tokens: true, expiry: false },
      topology: redisTopology(1, 'none'),
      victimHoldTtls: 3,
      injectAfterTtls: [0, 0.25],
      inject: sigstopDlock,
    },
    {
      name: 'redis-sigstop',
      title: 'SIGSTOP of the Redis server for 1.5-2.5 TTLs during a hold, then SIGCONT',
      promises: { tokens: true, expiry: true },
      topology: redisTopology(1, 'none'),
      victimHoldTtls: 3,
      injectAfterTtls: [0, 0.34],
      inject: sigstopRedis,
    },
    {
      name: 'redis-restart-aof',
      title: 'SIGKILL + restart of Redis with AOF appendfsync always during a hold',
      promises: { tokens: true, expiry: true },
      topology: redisTopology(1, 'aof-always'),
      victimHoldTtls: 3,
      injectAfterTtls: [0, 0.5],
      inject: restartRedis(false),
    },
    {
      name: 'redis-restart-nopersist',
      title: 'SIGKILL + restart of Redis without persistence during a hold (counter rolled back)',
      promises: { tokens: false, expiry: false },
      topology: redisTopology(1, 'none'),
      victimHoldTtls: 3,
      injectAfterTtls: [0, 0.5],
      inject: restartRedis(true),
    },
    {
      name: 'flushall',
      title: 'FLUSHALL during a hold (lock and counter deleted)',
      promises: { tokens: false, expiry: false },
      topology: redisTopology(1, 'none'),
      victimHoldTtls: 3,
      injectAfterTtls: [0, 0.5],
      inject: flushall,
    },
    {
      name: `${redlock}-restart-aof`,
      title: `Redlock over ${redlockInstances} instances with AOF always: SIGKILL + restart of 1..quorum of them during a hold`,
      promises: { tokens: true, expiry: true },
      topology: redisTopology(redlockInstances, 'aof-always'),
      victimHoldTtls: 3,
      injectAfterTtls: [0, 0.5],
      inject: restartInstances(false),
    },
    {
      name: `${redlock}-restart-nopersist`,
      title: `Redlock over ${redlockInstances} instances without persistence: SIGKILL + restart of 1..quorum of them during a hold`,
      // A restarted empty instance can complete a new majority while the old holder still
      // holds its own: the SPEC promises fencing only "as long as counters survive restarts".
      promises: { tokens: false, expiry: false },
      topology: redisTopology(redlockInstances, 'none'),
      victimHoldTtls: 3,
      injectAfterTtls: [0, 0.5],
      inject: restartInstances(true),
    },
    // -------------------------------------------------------------------------------------
    // SENTINEL HOOK (issue 6). These two rows are reported as "skipped" until dlock accepts
    // `redis+sentinel://` URLs. To add them:
    //  1. topology: start a primary, a replica (`--replicaof 127.0.0.1 <primary>`) and a
    //     sentinel (`redis-sentinel` with `sentinel monitor chaos 127.0.0.1 <primary> 1`,
    //     `down-after-milliseconds` well under the TTL); return
    //     { urls: ['redis+sentinel://127.0.0.1:<sentinel>/chaos'], servers, close }.
    //  2. inject: while the victim holds, `SENTINEL FAILOVER chaos` on the sentinel (or
    //     SIGSTOP the primary past down-after-milliseconds), await +switch-master, heal the
    //     old primary; to make the replica lag, `CLIENT PAUSE <ms> WRITE` it (or DEBUG SLEEP)
    //     just before; return { at, healedAt, lockEndsAt? } like the kinds above.
    //  3. delete `available` below. The runner, the analysis and the report need no change.
    // Promises: a failover to a lagging replica can roll the counter back; --sync-replicas 1
    // narrows the window (the fence is on a replica before the child starts) but renewals
    // are not WAITed, so the SPEC promises neither row; both are reported.
    // -------------------------------------------------------------------------------------
    {
      name: 'sentinel-failover',
      title: 'Sentinel failover during a hold, without --sync-replicas',
      promises: { tokens: false, expiry: false },
      dlockArgs: [],
      victimHoldTtls: 3,
      injectAfterTtls: [0, 0.5],
      available: () => SENTINEL_PENDING,
    },
    {
      name: 'sentinel-failover-sync',
      title: 'Sentinel failover during a hold, with --sync-replicas 1',
      promises: { tokens: false, expiry: false },
      dlockArgs: ['--sync-replicas', '1'],
      victimHoldTtls: 3,
      injectAfterTtls: [0, 0.5],
      available: () => SENTINEL_PENDING,
    },
  ];
}

/** The parent-death signal (setpriv on Linux) is what makes the child die with a SIGKILLed dlock. */
export function orphansPromised() {
  return process.platform === 'linux' && existsSync('/usr/bin/setpriv');
}
