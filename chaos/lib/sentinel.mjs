// A primary, one replica and one Sentinel on 127.0.0.1 (the minimal recipe of
// test/helpers/topology.ts's SentinelTopology, in plain .mjs), and the failover fault the
// sentinel-failover kinds inject: a replica cut off from the primary while locks are taken on
// it, the primary SIGKILLed, the lagging replica promoted.

import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { waitUntil } from '../../support/wait-until.mjs';
import { CHAOS_ARGS, freePort, killServer, startServer } from './redis.mjs';
import { sleep, timeLimit, track, trackDir, untrackDir, wallMs } from './procs.mjs';

export const MASTER = 'chaos';

/** No 5 s delay before a diskless full sync: a (re)started replica is in sync at once. */
const DATA_ARGS = ['--repl-diskless-sync-delay', '0'];

/** A flat [k1, v1, k2, v2, ...] reply (SENTINEL MASTER, REPLICAS) as an object. */
function fields(flat) {
  const map = {};
  for (let i = 0; i + 1 < flat.length; i += 2) map[flat[i]] = flat[i + 1];
  return map;
}

/** An INFO section as an object. */
async function info(client, section) {
  const text = await client.info(section);
  return Object.fromEntries(
    text
      .split('\r\n')
      .filter((l) => l.includes(':'))
      .map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1)]),
  );
}

function connectTo(port) {
  return new Redis({
    host: '127.0.0.1',
    port,
    maxRetriesPerRequest: 1,
    lazyConnect: false,
    retryStrategy: () => 50,
  }).on('error', () => {});
}

/** `redis-server <conf> --sentinel` with its own (rewritable) config file. */
class SentinelProcess {
  constructor(port, dir) {
    this.port = port;
    this.dir = dir;
  }

  static async start(primaryPort) {
    const port = await freePort();
    const dir = trackDir(mkdtempSync(join(tmpdir(), 'dlock-chaos-sentinel-')));
    const file = join(dir, 'sentinel.conf');
    writeFileSync(
      file,
      [
        `port ${port}`,
        'bind 127.0.0.1',
        `dir ${dir}`,
        `logfile ${join(dir, 'sentinel.log')}`,
        `sentinel monitor ${MASTER} 127.0.0.1 ${primaryPort} 1`,
        `sentinel down-after-milliseconds ${MASTER} 2000`,
        `sentinel failover-timeout ${MASTER} 2000`,
        '',
      ].join('\n'),
    );
    const sentinel = new SentinelProcess(port, dir);
    const child = track(spawn('redis-server', [file, '--sentinel'], { stdio: 'ignore' }));
    sentinel.process = child;
    sentinel.exited = new Promise((resolve) => child.once('exit', resolve));
    return sentinel;
  }

  async close() {
    const child = this.process;
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGCONT');
      child.kill('SIGKILL');
      await this.exited;
    }
    untrackDir(this.dir);
  }
}

/**
 * Primary + replica (data servers, `servers`) watched by one sentinel (quorum 1).
 * `urls` = [redis+sentinel://127.0.0.1:<sentinel>/chaos], what the workers' dlock get.
 */
export class SentinelTopology {
  constructor(servers, sentinel) {
    this.servers = servers;
    this.sentinel = sentinel;
    this.clients = new Map();
    this.primary = servers[0];
  }

  static async start() {
    const primary = await startServer('none', DATA_ARGS);
    const servers = [primary];
    let topology;
    try {
      servers.push(await startServer('none', [...DATA_ARGS, '--replicaof', '127.0.0.1', String(primary.port)]));
      // The replica must be linked and acknowledging writes before the sentinel looks at it.
      topology = new SentinelTopology(servers, undefined);
      await topology.waitForLink();
      topology.sentinel = await SentinelProcess.start(primary.port);
      await topology.waitUntilWatched();
      return topology;
    } catch (error) {
      if (topology) await topology.close();
      else await Promise.all(servers.map((s) => s.close()));
      throw error;
    }
  }

  get urls() {
    return [`redis+sentinel://127.0.0.1:${this.sentinel.port}/${MASTER}`];
  }

  get replica() {
    return this.servers.find((s) => s !== this.primary);
  }

  /** One admin client per port, reused (WAIT counts the writes of its own connection). */
  client(port) {
    let client = this.clients.get(port);
    if (!client) this.clients.set(port, (client = connectTo(port)));
    return client;
  }

  /** The replica is synced and has acknowledged a write: PUBLISH, then WAIT 1 100 until it says 1. */
  waitForLink() {
    const primary = this.client(this.primary.port);
    const replica = this.client(this.replica.port);
    return waitUntil(
      `replica ${this.replica.port} to sync with ${this.primary.port}`,
      async () => {
        const own = await info(replica, 'replication');
        if (
          own.master_link_status !== 'up' ||
          own.master_sync_in_progress !== '0' ||
          Number(own.master_port) !== this.primary.port
        )
          return false;
        await primary.publish('chaos:ack', '');
        return Number(await primary.call('WAIT', 1, 100)) >= 1;
      },
      { timeoutMs: 15_000, everyMs: 20 },
    );
  }

  /**
   * The sentinel names the primary as master and knows the replica as a slave that is up;
   * `linkReported`: and its last INFO of the replica showed the link up (the sentinel reads a
   * replica's INFO every 10 s only, so after a failover that is not awaited: the replica is
   * already known synced by waitForLink, and a failover retries until the sentinel takes it).
   */
  waitUntilWatched(linkReported = true) {
    const sentinel = this.client(this.sentinel.port);
    return waitUntil(
      `sentinel ${this.sentinel.port} to watch ${this.primary.port} and its replica ${this.replica.port}`,
      async () => {
        const master = fields(await sentinel.call('SENTINEL', 'MASTER', MASTER));
        if (master.flags !== 'master' || Number(master.port) !== this.primary.port) return false;
        const replicas = (await sentinel.call('SENTINEL', 'REPLICAS', MASTER)).map(fields);
        return replicas.some(
          (r) =>
            Number(r.port) === this.replica.port &&
            r.flags === 'slave' &&
            (!linkReported || r['master-link-status'] === 'ok'),
        );
      },
      { timeoutMs: 15_000, everyMs: 20 },
    );
  }

  /** Subscribe to +switch-master first, then SENTINEL FAILOVER until accepted; resolves with the new primary's port. */
  async failover(timeoutMs = 15_000) {
    const subscriber = connectTo(this.sentinel.port);
    try {
      await subscriber.subscribe('+switch-master');
      const switched = new Promise((resolve) => {
        subscriber.on('message', (_channel, message) => {
          // "<master name> <old ip> <old port> <new ip> <new port>"
          const [name, , , , port] = message.split(' ');
          if (name === MASTER) resolve(Number(port));
        });
      });
      const sentinel = this.client(this.sentinel.port);
      // NOGOODSLAVE while the sentinel still thinks the just-resumed replica is down; INPROG when
      // it started a failover of its own (the primary is down): either way, await the switch.
      // Stop asking once the switch is seen: an OK after it would start a second failover.
      let seen = false;
      switched.then(() => (seen = true));
      const deadline = Date.now() + timeoutMs;
      while (!seen && Date.now() < deadline) {
        const reply = await sentinel.call('SENTINEL', 'FAILOVER', MASTER).catch((error) => error.message);
        if (reply === 'OK' || /INPROG/.test(reply)) break;
        await sleep(20);
      }
      const port = await Promise.race([switched, timeLimit(Math.max(0, deadline - Date.now())).then(() => undefined)]);
      if (port === undefined) throw new Error(`no +switch-master within ${timeoutMs} ms`);
      return port;
    } finally {
      subscriber.disconnect();
    }
  }

  async close() {
    for (const client of this.clients.values()) client.disconnect();
    this.clients.clear();
    await this.sentinel?.close();
    await Promise.all(this.servers.map((s) => s.close()));
  }
}

/**
 * The failover of a lagging replica. The replica is SIGSTOPped and its link killed on the
 * primary (otherwise the writes already in its socket buffer would reach it on SIGCONT); the
 * next critical section is let begin on the primary alone (without --sync-replicas; with it,
 * WAIT fails and that dlock exits 69 without running its command), the primary is SIGKILLed,
 * the replica continued and promoted by SENTINEL FAILOVER (awaiting +switch-master). The old
 * primary comes back empty as a replica of the new one, the topology is watched again, and
 * the fault is over when a critical section has begun through the new primary.
 */
export async function sentinelFailover({ topology, resource, victim, random, ttlMs }) {
  const { primary, replica } = topology;
  const at = wallMs();
  replica.pause();
  await topology.client(primary.port).call('CLIENT', 'KILL', 'TYPE', 'replica');
  // Wait for a critical section (not the victim's) to begin while the replica lags, for at
  // most the victim's remaining hold plus a TTL; then a little more, so that it may write.
  const other = await waitUntil(
    'a section',
    async () =>
      [...resource.sections.values()].find((s) => s.run !== victim.id && s.begin > at) ??
      (wallMs() - at > 4 * ttlMs ? 'none' : false),
    { timeoutMs: 60_000, everyMs: 20 },
  );
  await sleep(random.between(0, 0.5) * ttlMs);
  const goneAt = await killServer(primary);
  replica.resume();
  const newPort = await topology.failover();
  const healedAt = wallMs();
  if (newPort !== replica.port) throw new Error(`sentinel promoted ${newPort}, expected ${replica.port}`);
  // The old primary returns, empty, as a replica of the new one.
  primary.args = [...CHAOS_ARGS, ...DATA_ARGS, '--replicaof', '127.0.0.1', String(replica.port)];
  await primary.launch();
  topology.primary = replica;
  await topology.waitForLink();
  await topology.waitUntilWatched(false);
  const readyAt = wallMs();
  // dlock follows +switch-master: a critical section begins through the new primary.
  const after = await waitUntil(
    'a section',
    async () =>
      [...resource.sections.values()].find((s) => s.begin > healedAt) ??
      (wallMs() - readyAt > 6 * ttlMs ? 'none' : false),
    { timeoutMs: 60_000, everyMs: 20 },
  );
  return {
    at,
    healedAt,
    readyAt,
    // undefined: no critical section began within 6 TTLs of the topology being ready again.
    first_section_after_failover_ms: after === 'none' ? undefined : Math.round(after.begin - healedAt),
    laggedMs: Math.round(goneAt - at),
    promoted: newPort,
    section_during_lag: other === 'none' ? undefined : other.run,
    // A section begun during the lag holds a lock only the dead primary had.
    lockEndsAt: other === 'none' ? undefined : goneAt,
  };
}
