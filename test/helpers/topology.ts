// Real Redis deployments on 127.0.0.1 free ports, started and torn down by the tests:
// a primary with replicas, the same watched by Sentinel, and a Redis Cluster of primaries.
// Built from support/redis-server.mjs servers; waits on the topology's own state, never fixed sleeps.

import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { canConnect, freePort, RedisServer } from '../../support/redis-server.mjs';
import { waitUntil } from '../../support/wait-until.mjs';

const exec = promisify(execFile);

/** Topology changes (a sync, a failover) take seconds: a longer limit, a slower poll. */
const TOPOLOGY_WAIT = { timeoutMs: 15_000, everyMs: 20 };

/** Run `step`; if it fails, tear `topology` down (no stray servers) and fail. */
async function closeOnFailure<T>(topology: { close(): Promise<void> }, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    await topology.close().catch(() => {});
    throw error;
  }
}

/** One INFO section as a field map. */
async function info(client: Redis, section: string): Promise<Record<string, string>> {
  const text = await client.info(section);
  return Object.fromEntries(
    text
      .split('\r\n')
      .filter((line) => line.includes(':'))
      .map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1)]),
  );
}

/**
 * true once a replica is synced with its primary and acknowledges its writes. Right after a
 * full sync the primary may count a replica for WAIT only after its next periodic ACK (~1s),
 * so a write (a PUBLISH, which replicates without a key) must have been acknowledged.
 */
async function linkUp(primary: Redis, replica: Redis, replicaPort: number): Promise<boolean> {
  const own = await info(replica, 'replication');
  if (own.master_link_status !== 'up' || own.master_sync_in_progress !== '0') return false;
  await primary.publish('topology:ack', '');
  const written = Number((await info(primary, 'replication')).master_repl_offset);
  await primary.call('WAIT', 1, 100);
  const acked = Object.values(await info(primary, 'replication'))
    .map((value) => new RegExp(`port=${replicaPort},state=online,offset=(\\d+)`).exec(value)?.[1])
    .find((offset) => offset !== undefined);
  return acked !== undefined && Number(acked) >= written;
}

/** A loopback client for assertions and fault injection; errors are left to the commands. */
export function connectTo(port: number, password?: string): Redis {
  return new Redis({ host: '127.0.0.1', port, password, maxRetriesPerRequest: 1, lazyConnect: false }).on(
    'error',
    () => {},
  );
}

// ---------------------------------------------------------------------------------------
// Primary + replicas

export interface ReplicatedOptions {
  replicas?: number;
  /** requirepass and masterauth on every server (so a demoted primary can replicate too). */
  password?: string;
}

export class Replicated {
  private readonly clients = new Map<number, Redis>();

  constructor(
    readonly servers: RedisServer[],
    readonly password: string | undefined,
  ) {}

  static async start(options: ReplicatedOptions = {}): Promise<Replicated> {
    // No delay before a diskless full sync (5s by default): replicas are ready at once.
    const args = [
      '--repl-diskless-sync-delay',
      '0',
      ...(options.password ? ['--requirepass', options.password, '--masterauth', options.password] : []),
    ];
    const primary = await RedisServer.start({ args });
    const replicas = await Promise.all(
      Array.from({ length: options.replicas ?? 1 }, () =>
        RedisServer.start({ args: [...args, '--replicaof', '127.0.0.1', String(primary.port)] }),
      ),
    );
    const topology = new Replicated([primary, ...replicas], options.password);
    await closeOnFailure(topology, () => Promise.all(replicas.map((replica) => topology.waitForLink(replica))));
    return topology;
  }

  get primary(): RedisServer {
    return this.servers[0];
  }

  get replicas(): RedisServer[] {
    return this.servers.slice(1);
  }

  /** One client per server, reused. */
  client(server: RedisServer): Redis {
    let client = this.clients.get(server.port);
    if (!client) this.clients.set(server.port, (client = connectTo(server.port, this.password)));
    return client;
  }

  /** Resolve once `replica` is synced with `primary` and counted by it (see linkUp). */
  waitForLink(replica: RedisServer, primary: RedisServer = this.primary): Promise<true> {
    return waitUntil(
      `replica ${replica.port} to sync`,
      () => linkUp(this.client(primary), this.client(replica), replica.port),
      TOPOLOGY_WAIT,
    );
  }

  async close(): Promise<void> {
    for (const client of this.clients.values()) client.disconnect();
    this.clients.clear();
    await Promise.all(this.servers.map((server) => server.close()));
  }
}

// ---------------------------------------------------------------------------------------
// Sentinel

/** A redis-server in sentinel mode, with its own config file (Sentinel rewrites it). */
export class SentinelServer {
  private process: ChildProcess | undefined;
  readonly dir = mkdtempSync(join(tmpdir(), 'dlock-sentinel-'));

  private constructor(
    readonly port: number,
    private readonly config: string,
  ) {}

  static async start(config: (port: number) => string): Promise<SentinelServer> {
    const port = await freePort();
    const sentinel = new SentinelServer(port, config(port));
    await sentinel.launch();
    return sentinel;
  }

  get pid(): number | undefined {
    return this.process?.pid;
  }

  /** What the sentinel logged (failover steps), for a failing test's message. */
  log(): string {
    try {
      return readFileSync(join(this.dir, 'sentinel.log'), 'utf8');
    } catch {
      return '';
    }
  }

  private async launch(): Promise<void> {
    const file = join(this.dir, 'sentinel.conf');
    writeFileSync(file, `${this.config}logfile ${join(this.dir, 'sentinel.log')}\n`);
    this.process = spawn('redis-server', [file, '--sentinel'], { stdio: 'ignore' });
    await waitUntil(`sentinel on ${this.port} to start`, () => canConnect(this.port));
  }

  /** SIGSTOP: the port still accepts connections but nothing answers. */
  pause(): void {
    this.process?.kill('SIGSTOP');
  }

  resume(): void {
    this.process?.kill('SIGCONT');
  }

  async stop(): Promise<void> {
    const proc = this.process;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGCONT');
    proc.kill('SIGKILL');
    await exited;
    this.process = undefined;
  }

  async close(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export interface SentinelOptions extends ReplicatedOptions {
  sentinels?: number;
  /** Sentinels that must agree the primary is down; default: a majority of them. */
  quorum?: number;
  /** requirepass on the sentinels themselves (DLOCK_SENTINEL_PASSWORD). */
  sentinelPassword?: string;
  masterName?: string;
  /** How long the primary must be silent before it is considered down (fast, for tests). */
  downAfterMs?: number;
}

/**
 * A primary with replicas watched by Sentinel, tuned to fail over within about a second.
 * `url()` is the redis+sentinel:// URL dlock takes; `failover()` and `currentPrimary()`
 * drive and observe it. Ready once every sentinel knows every replica as a healthy one.
 */
export class SentinelTopology {
  private readonly clients = new Map<number, Redis>();
  private readonly subscribers: Redis[] = [];

  private constructor(
    readonly data: Replicated,
    readonly sentinels: SentinelServer[],
    readonly masterName: string,
    readonly sentinelPassword: string | undefined,
  ) {}

  static async start(options: SentinelOptions = {}): Promise<SentinelTopology> {
    const data = await Replicated.start(options);
    const masterName = options.masterName ?? 'dlock-primary';
    const count = options.sentinels ?? 1;
    const quorum = options.quorum ?? Math.floor(count / 2) + 1;
    const config = (port: number) =>
      [
        `port ${port}`,
        'bind 127.0.0.1',
        'protected-mode no',
        `sentinel monitor ${masterName} 127.0.0.1 ${data.primary.port} ${quorum}`,
        `sentinel down-after-milliseconds ${masterName} ${options.downAfterMs ?? 500}`,
        `sentinel failover-timeout ${masterName} 2000`,
        `sentinel parallel-syncs ${masterName} 1`,
        ...(options.password ? [`sentinel auth-pass ${masterName} ${options.password}`] : []),
        ...(options.sentinelPassword ? [`requirepass ${options.sentinelPassword}`] : []),
        '',
      ].join('\n');
    const sentinels = await closeOnFailure(data, () =>
      Promise.all(Array.from({ length: count }, () => SentinelServer.start(config))),
    );
    const topology = new SentinelTopology(data, sentinels, masterName, options.sentinelPassword);
    await closeOnFailure(topology, () => topology.waitUntilWatched());
    return topology;
  }

  /** redis+sentinel://[:password@]127.0.0.1:s1,.../<master> (the data password, if any). */
  url(options: { password?: string; sentinels?: number[] } = {}): string {
    const password = 'password' in options ? options.password : this.data.password;
    const ports = options.sentinels ?? this.sentinels.map((s) => s.port);
    return `redis+sentinel://${password ? `:${encodeURIComponent(password)}@` : ''}${ports.map((p) => `127.0.0.1:${p}`).join(',')}/${this.masterName}`;
  }

  /** A client of one sentinel (SENTINEL commands, pub/sub of its events). */
  sentinelClient(sentinel: SentinelServer = this.sentinels[0]): Redis {
    let client = this.clients.get(sentinel.port);
    if (!client) this.clients.set(sentinel.port, (client = connectTo(sentinel.port, this.sentinelPassword)));
    return client;
  }

  /** The port of the server the sentinels currently name as primary. */
  async currentPrimaryPort(): Promise<number> {
    const [, port] = (await this.sentinelClient().call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', this.masterName)) as [
      string,
      string,
    ];
    return Number(port);
  }

  /** The data server at `port`. */
  server(port: number): RedisServer {
    const server = this.data.servers.find((s) => s.port === port);
    if (!server) throw new Error(`no data server on port ${port}`);
    return server;
  }

  /** Every sentinel sees the primary up and each replica as a replica with a live link. */
  async waitUntilWatched(): Promise<void> {
    const primary = await this.currentPrimaryPort().catch(() => this.data.primary.port);
    const expected = this.data.servers
      .filter((s) => s.port !== primary && s.pid !== undefined)
      .map((s) => String(s.port));
    await Promise.all(
      this.sentinels.map(async (sentinel) => {
        const client = this.sentinelClient(sentinel);
        await waitUntil(
          `sentinel ${sentinel.port} to see ${expected.length} healthy replicas`,
          async () => {
            const replicas = ((await client.call('SENTINEL', 'REPLICAS', this.masterName)) as string[][]).map(fields);
            const healthy = replicas
              .filter((r) => r.flags === 'slave' && r['master-link-status'] === 'ok')
              .map((r) => r.port);
            const master = fields((await client.call('SENTINEL', 'MASTER', this.masterName)) as string[]);
            return (
              master.flags === 'master' &&
              expected.every((port) => healthy.includes(port)) &&
              (this.sentinels.length === 1 || Number(master['num-other-sentinels']) === this.sentinels.length - 1)
            );
          },
          TOPOLOGY_WAIT,
        );
      }),
    );
  }

  /**
   * Listen for the next +switch-master a sentinel announces; `switched` resolves with the
   * new primary's port. Start listening before causing the failover, await after.
   */
  async nextSwitch(): Promise<{ switched: Promise<number> }> {
    const subscriber = connectTo(this.sentinels[0].port, this.sentinelPassword);
    this.subscribers.push(subscriber);
    await subscriber.subscribe('+switch-master');
    const switched = new Promise<number>((resolve) => {
      subscriber.on('message', (_channel: string, message: string) => {
        // "<master name> <old ip> <old port> <new ip> <new port>"
        const [name, , , , port] = message.split(' ');
        if (name !== this.masterName) return;
        subscriber.disconnect();
        resolve(Number(port));
      });
    });
    return { switched };
  }

  /** SENTINEL FAILOVER (the primary stays up, to be demoted later); resolves with the new primary's port. */
  async failover(): Promise<number> {
    const { switched } = await this.nextSwitch();
    await waitUntil(
      'SENTINEL FAILOVER to be accepted',
      async () => (await this.sentinelClient().call('SENTINEL', 'FAILOVER', this.masterName)) === 'OK',
      TOPOLOGY_WAIT,
    );
    return switched;
  }

  async close(): Promise<void> {
    for (const client of [...this.clients.values(), ...this.subscribers.splice(0)]) client.disconnect();
    this.clients.clear();
    await Promise.all(this.sentinels.map((s) => s.close()));
    await this.data.close();
  }
}

/** A flat [k1, v1, k2, v2, ...] reply as a map. */
function fields(flat: string[]): Record<string, string> {
  const map: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) map[flat[i]] = flat[i + 1];
  return map;
}

// ---------------------------------------------------------------------------------------
// Cluster

export interface ClusterOptions {
  primaries?: number;
  /** Indexes of the primaries that get one replica each. */
  replicate?: number[];
  /** requirepass and masterauth on every node. */
  password?: string;
}

/** A Redis Cluster of primaries (16384 slots split by `redis-cli --cluster create`). */
export class ClusterTopology {
  private readonly clients = new Map<number, Redis>();

  private constructor(
    readonly primaries: RedisServer[],
    /** replicas[i] replicates primaries[replicate[i]]. */
    readonly replicas: RedisServer[],
    private readonly replicated: RedisServer[],
    readonly password: string | undefined,
  ) {}

  static async start(options: ClusterOptions = {}): Promise<ClusterTopology> {
    const auth = options.password ? ['--requirepass', options.password, '--masterauth', options.password] : [];
    const args = [
      '--cluster-enabled',
      'yes',
      '--cluster-config-file',
      'nodes.conf',
      '--cluster-node-timeout',
      '2000',
      '--repl-diskless-sync-delay',
      '0',
      ...auth,
    ];
    const count = options.primaries ?? 3;
    const replicate = options.replicate ?? [];
    const servers = await Promise.all(
      Array.from({ length: count + replicate.length }, () => RedisServer.start({ args })),
    );
    const primaries = servers.slice(0, count);
    const topology = new ClusterTopology(
      primaries,
      servers.slice(count),
      replicate.map((i) => primaries[i]),
      options.password,
    );
    const cli = (...args: string[]) =>
      exec('redis-cli', [
        ...(options.password ? ['-a', options.password, '--no-auth-warning'] : []),
        '--cluster',
        ...args,
      ]);
    const nodes = primaries.map((s) => `127.0.0.1:${s.port}`);
    await closeOnFailure(topology, async () => {
      await cli('create', ...nodes, '--cluster-replicas', '0', '--cluster-yes');
      for (const [i, replica] of topology.replicas.entries()) {
        const id = await topology.nodeId(topology.replicated[i]);
        await cli('add-node', `127.0.0.1:${replica.port}`, nodes[0], '--cluster-slave', '--cluster-master-id', id);
      }
      await topology.waitUntilReady();
    });
    return topology;
  }

  /** redis+cluster://[:password@]127.0.0.1:p1[,...]: by default only the first primary, as a seed. */
  url(seeds: RedisServer[] = [this.primaries[0]]): string {
    const auth = this.password ? `:${encodeURIComponent(this.password)}@` : '';
    return `redis+cluster://${auth}${seeds.map((s) => `127.0.0.1:${s.port}`).join(',')}`;
  }

  /** One client per node, reused. */
  client(server: RedisServer): Redis {
    let client = this.clients.get(server.port);
    if (!client) this.clients.set(server.port, (client = connectTo(server.port, this.password)));
    return client;
  }

  async nodeId(server: RedisServer): Promise<string> {
    return String(await this.client(server).call('CLUSTER', 'MYID'));
  }

  /** Every node says cluster_state:ok and agrees on who serves every slot; replicas are synced. */
  async waitUntilReady(): Promise<void> {
    const all = [...this.primaries, ...this.replicas];
    await waitUntil(
      'the cluster to be ready',
      async () => {
        const states = await Promise.all(
          all.map(async (server) => (await this.client(server).call('CLUSTER', 'INFO')) as string),
        );
        if (!states.every((state) => state.includes('cluster_state:ok'))) return false;
        const maps = await Promise.all(
          all.map(async (server) => JSON.stringify(await this.client(server).call('CLUSTER', 'SLOTS'))),
        );
        if (new Set(maps).size !== 1) return false;
        const links = await Promise.all(
          this.replicas.map((replica, i) =>
            linkUp(this.client(this.replicated[i]), this.client(replica), replica.port),
          ),
        );
        return links.every(Boolean);
      },
      TOPOLOGY_WAIT,
    );
  }

  /** The primary whose slots hold `key` (a lock's keys all hash to one slot: its {tag}). */
  async primaryOf(key: string): Promise<RedisServer> {
    return this.ownerOfSlot(await this.slotOf(key));
  }

  /** The slot of `key`. */
  async slotOf(key: string): Promise<number> {
    return Number(await this.client(this.primaries[0]).call('CLUSTER', 'KEYSLOT', key));
  }

  /**
   * Move one slot, with its keys (MIGRATE keeps their TTLs), to another primary, the way a
   * resharding does: clients still sending to the old owner get ASK, then MOVED.
   */
  async moveSlot(slot: number, to: RedisServer): Promise<void> {
    const owner = await this.ownerOfSlot(slot);
    if (owner === to) return;
    const [fromId, toId] = [await this.nodeId(owner), await this.nodeId(to)];
    const source = this.client(owner);
    await this.client(to).call('CLUSTER', 'SETSLOT', slot, 'IMPORTING', fromId);
    await source.call('CLUSTER', 'SETSLOT', slot, 'MIGRATING', toId);
    for (;;) {
      const keys = (await source.call('CLUSTER', 'GETKEYSINSLOT', slot, 100)) as string[];
      if (keys.length === 0) break;
      await source.call(
        'MIGRATE',
        '127.0.0.1',
        to.port,
        '',
        0,
        5000,
        ...(this.password ? ['AUTH', this.password] : []),
        'KEYS',
        ...keys,
      );
    }
    for (const server of this.primaries) await this.client(server).call('CLUSTER', 'SETSLOT', slot, 'NODE', toId);
    await this.waitUntilReady();
  }

  private async ownerOfSlot(slot: number): Promise<RedisServer> {
    const ranges = (await this.client(this.primaries[0]).call('CLUSTER', 'SLOTS')) as [
      number,
      number,
      [string, number, string],
    ][];
    const range = ranges.find(([from, to]) => slot >= from && slot <= to);
    if (!range) throw new Error(`no node serves slot ${slot}`);
    return this.primaries.find((s) => s.port === Number(range[2][1]))!;
  }

  async close(): Promise<void> {
    for (const client of this.clients.values()) client.disconnect();
    this.clients.clear();
    await Promise.all([...this.primaries, ...this.replicas].map((server) => server.close()));
  }
}
