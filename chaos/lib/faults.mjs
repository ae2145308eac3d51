// The fault kinds. Each one is a row of the report and a phase of the run: its own Redis
// topology, its own key and a fresh fenced resource, so that what one fault does (a rolled
// back counter) cannot be blamed on another.
//
// A kind says what docs/guarantees.md promises under it, and how to inject it while a
// victim holds the lock:
//   name, title        the row label and a sentence for the report
//   promises           { tokens, expiry }: tokens strictly increase and no stale write is
//                      accepted / while dlock lives its child never runs past the lock's expiry.
//                      (The child dying with a SIGKILLed dlock is promised for every kind.)
//   topology(options)  start the servers: { urls, servers, close() }
//   dlockArgs          extra `dlock run` options for this kind
//   victimHoldTtls     how long the victim's child holds (in TTLs): longer than one TTL, so
//                      the lock must be renewed across the fault
//   victimWritesAfterNewer  the victim's child holds at least victimHoldTtls, then writes only
//                      once a newer token has been written (at most 4 × that hold)
//   injectAfterTtls    [min, max] delay from the victim's begin to the fault (in TTLs)
//   inject(ctx)        do the fault and heal it; ctx = { servers, victim (DlockRun), section,
//                      random, ttlMs, quorum }. Returns a record for results.json: { at,
//                      healedAt?, lockEndsAt?, ... }; lockEndsAt = a time by which every lock
//                      held at the fault had certainly ended (its keys deleted on a quorum).
//   available()        undefined, or why the kind cannot run here (the row says "skipped")

import { existsSync } from 'node:fs';
import {
  flushall,
  proxyDelay,
  proxyDropReplies,
  proxyStall,
  restartInstances,
  restartRedis,
  sigkillDlock,
  sigstopDlock,
  sigstopRedis,
  stallDlockAtDeadline,
} from './inject.mjs';
import { TcpProxy } from '../../support/tcp-proxy.mjs';
import { startServers } from './redis.mjs';
import { SentinelTopology, sentinelFailover } from './sentinel.mjs';

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

/** One server reached through a misbehaving TCP proxy (support/tcp-proxy.mjs): ctx.topology.proxy. */
function proxiedTopology() {
  return async () => {
    const servers = await startServers(1, 'none');
    const proxy = await TcpProxy.start(servers[0].port);
    return {
      urls: [proxy.url],
      servers,
      proxy,
      async close() {
        proxy.resume();
        await proxy.close();
        await Promise.all(servers.map((s) => s.close()));
      },
    };
  };
}

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
      title: 'SIGSTOP of a holding dlock for ~5 TTLs, then SIGCONT (a GC pause): its child runs on',
      // A frozen dlock cannot stop its child: only the fencing token protects the resource.
      promises: { tokens: true, expiry: false },
      topology: redisTopology(1, 'none'),
      victimHoldTtls: 4,
      // Its write must come after the next holder's, however slowly a loaded machine starts it.
      victimWritesAfterNewer: true,
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
      // holds its own: docs/guarantees.md promises fencing only "as long as counters survive restarts".
      promises: { tokens: false, expiry: false },
      topology: redisTopology(redlockInstances, 'none'),
      victimHoldTtls: 3,
      injectAfterTtls: [0, 0.5],
      inject: restartInstances(true),
    },
    // -------------------------------------------------------------------------------------
    // The network between dlock and Redis (support/tcp-proxy.mjs), and dlock itself stalled at
    // its deadline. Slow or silent links cost at most the lock, never its promises: a renewal
    // is given the time the lease has left, and the child is stopped before the lease ends.
    // -------------------------------------------------------------------------------------
    {
      name: 'proxy-delay',
      title: 'every reply from Redis 0.1 TTL late (100 ms at ttl 1s) for 2-3 TTLs during a hold (a slow link)',
      promises: { tokens: true, expiry: true },
      topology: proxiedTopology(),
      victimHoldTtls: 3,
      injectAfterTtls: [0, 0.5],
      inject: proxyDelay,
    },
    {
      name: 'proxy-stall',
      title: 'all traffic to Redis held for 1.5-2.5 TTLs during a hold, then delivered late (a hung link)',
      // Requests held in the link reach Redis late: a late extend only keeps a dead holder's key
      // longer, a late acquire of a waiter that gave up holds a key nobody uses until it expires.
      promises: { tokens: true, expiry: true },
      topology: proxiedTopology(),
      victimHoldTtls: 3,
      injectAfterTtls: [0, 0.34],
      inject: proxyStall,
    },
    {
      name: 'proxy-drop',
      title: "Redis's replies dropped for 1.5-2.5 TTLs during a hold (it still acts on the requests)",
      promises: { tokens: true, expiry: true },
      topology: proxiedTopology(),
      victimHoldTtls: 3,
      injectAfterTtls: [0, 0.34],
      inject: proxyDropReplies,
    },
    {
      name: 'dlock-stall',
      title: 'Redis unreachable (link stalled) and the victim dlock SIGSTOPped for 120 ms across its kill deadline',
      // A stalled dlock cannot stop its child on time: the deadline's scheduling margin absorbs a
      // stall that ends within it (ttl/10, at most 200 ms), dlock kills at once and says so
      // ("stalled") when it wakes past its kill deadline; only fencing is promised.
      promises: { tokens: true, expiry: false },
      reportsOverruns: true,
      topology: proxiedTopology(),
      // The grace before SIGKILL is as short as it gets, so the stall hits the kill deadline.
      dlockArgs: ['--kill-after', '1ms'],
      victimHoldTtls: 3,
      injectAfterTtls: [0, 0.1],
      inject: stallDlockAtDeadline,
    },
    // -------------------------------------------------------------------------------------
    // Sentinel (chaos/lib/sentinel.mjs): a primary, a replica and one sentinel (quorum 1); the
    // workers' dlock get redis+sentinel://127.0.0.1:<sentinel>/chaos and follow +switch-master.
    // The fault: the replica is cut off (SIGSTOP, its link killed on the primary) while the next
    // section begins on the primary alone, the primary is SIGKILLed and the lagging replica
    // promoted (SENTINEL FAILOVER). Without --sync-replicas the promoted counter lacks the new
    // fence: tokens can repeat. With --sync-replicas 1 the WAIT fails and that dlock exits 69
    // without running its command, which narrows the window, but renewals are not WAITed and a
    // fence handed out before the failed WAIT is handed out again: docs/guarantees.md
    // promises neither row; both are reported.
    // -------------------------------------------------------------------------------------
    {
      name: 'sentinel-failover',
      title: 'Sentinel failover to a lagging replica during a hold, without --sync-replicas',
      promises: { tokens: false, expiry: false },
      topology: () => SentinelTopology.start(),
      dlockArgs: [],
      victimHoldTtls: 3,
      injectAfterTtls: [0, 0.5],
      inject: sentinelFailover,
    },
    {
      name: 'sentinel-failover-sync',
      title: 'Sentinel failover to a lagging replica during a hold, with --sync-replicas 1',
      promises: { tokens: false, expiry: false },
      topology: () => SentinelTopology.start(),
      dlockArgs: ['--sync-replicas', '1'],
      victimHoldTtls: 3,
      injectAfterTtls: [0, 0.5],
      inject: sentinelFailover,
    },
  ];
}

/** The parent-death signal (setpriv on Linux) is what makes the child die with a SIGKILLed dlock. */
export function orphansPromised() {
  return process.platform === 'linux' && existsSync('/usr/bin/setpriv');
}
