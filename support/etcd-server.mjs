// Real etcd processes (Debian's etcd-server, 3.4) on free 127.0.0.1 ports, for test/, bench/ and
// chaos/: a single member, or a cluster of members started together under one --initial-cluster.
// Faults are injected the way they happen: SIGSTOP (pause), SIGKILL (stop), restart on the same
// ports and data directory. Every member started is registered, so `killAllEtcd` can clean up on
// any exit path of a runner, as killAllServers does for redis-server.

import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './redis-server.mjs';
import { waitUntil } from './wait-until.mjs';

/** etcd starts in about a second; a cluster needs its election on a loaded machine too. */
const START_TIMEOUT_MS = 20_000;

const live = new Set();

/** SIGKILL every etcd member still running and remove its directory (synchronous: fits process 'exit'). */
export function killAllEtcd() {
  for (const server of live) server.kill();
}
// A test file that fails half-way (a hook's timeout) leaves no etcd behind its worker.
process.once('exit', killAllEtcd);

/** `count` distinct free ports (two calls of freePort may hand out the same one). */
async function freePorts(count) {
  const ports = new Set();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}

/** The environment for etcd and etcdctl without the caller's ETCD_ and ETCDCTL_ settings (etcd reads flags from them). */
function cleanEnv(extra = {}) {
  const env = {};
  for (const [name, value] of Object.entries(process.env))
    if (!name.startsWith('ETCD_') && !name.startsWith('ETCDCTL_')) env[name] = value;
  return { ...env, ETCDCTL_API: '3', ...extra };
}

/** One POST to etcd's JSON gateway, parsed; throws on a non-2xx answer or after `timeoutMs`. */
async function gateway(endpoint, path, body, timeoutMs = 1_000, tls = undefined) {
  if (tls) return httpsGateway(endpoint, path, body, timeoutMs, tls);
  const response = await fetch(`http://${endpoint}${path}`, {
    method: 'POST',
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const json = await response.json();
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status} ${JSON.stringify(json)}`);
  return json;
}

/** The same over https with the member's CA (a member started with `tls`). */
function httpsGateway(endpoint, path, body, timeoutMs, tls) {
  const [host, port] = endpoint.split(':');
  const options = { host, port: Number(port), path, method: 'POST', ca: readFileSync(tls.ca), timeout: timeoutMs };
  if (tls.clientAuth) Object.assign(options, { cert: readFileSync(tls.clientCert), key: readFileSync(tls.clientKey) });
  return new Promise((resolve, reject) => {
    const request = httpsRequest(options, (response) => {
      let text = '';
      response.on('data', (chunk) => (text += chunk));
      response.on('end', () =>
        response.statusCode === 200
          ? resolve(JSON.parse(text))
          : reject(new Error(`${path}: HTTP ${response.statusCode} ${text}`)),
      );
    });
    request.on('timeout', () => request.destroy(new Error('timed out')));
    request.on('error', reject);
    request.end(JSON.stringify(body));
  });
}

/** Run a process to its end: { code, signal, stdout, stderr } (code -1 when it could not start). */
function runToEnd(file, args, env) {
  return new Promise((resolve) => {
    const child = spawn(file, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', (error) => resolve({ code: -1, signal: null, stdout, stderr: stderr + String(error) }));
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** `etcdctl --endpoints <endpoints> …args` (ETCDCTL_API=3) run to its end. */
export function etcdctl(endpoints, ...args) {
  return runToEnd('etcdctl', ['--endpoints', endpoints, ...args], cleanEnv());
}

/** `etcdctl --endpoints <endpoints> …args` left running (an `etcdctl lock` holder), stdout/stderr piped. */
export function spawnEtcdctl(endpoints, args, options = {}) {
  return spawn('etcdctl', ['--endpoints', endpoints, ...args], {
    env: cleanEnv(options.env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

export class EtcdServer {
  /**
   * One member; `initialCluster` is the whole cluster's `name=peerURL,…` (itself alone by default).
   * Use `EtcdServer.start()` or `startEtcdCluster(n)`; the constructor only reserves the directory.
   */
  constructor(name, clientPort, peerPort, initialCluster, options = {}) {
    this.name = name;
    this.clientPort = clientPort;
    this.peerPort = peerPort;
    this.initialCluster = initialCluster ?? `${name}=http://127.0.0.1:${peerPort}`;
    /** Extra etcd arguments (--election-timeout, --auto-compaction-retention …), for the next `launch`. */
    this.args = options.args ?? [];
    /** Clients speak TLS: { cert, key, ca, clientAuth?, clientCert?, clientKey? } (PEM paths). */
    this.tls = options.tls;
    this.dir = mkdtempSync(join(tmpdir(), 'dlock-etcd-'));
    this.process = undefined;
    this.exited = Promise.resolve();
    this.paused = false;
    live.add(this);
  }

  /** A single-member cluster on free ports, ready for requests. */
  static async start(options = {}) {
    const [clientPort, peerPort] = await freePorts(2);
    const server = new this('e1', clientPort, peerPort, undefined, options);
    try {
      await server.launch();
    } catch (error) {
      await server.close();
      throw error;
    }
    return server;
  }

  /** `host:port` of its client URL (etcdctl's --endpoints). */
  get endpoint() {
    return `127.0.0.1:${this.clientPort}`;
  }

  /** The URL dlock takes (`--redis etcd://…`). */
  get url() {
    return `${this.tls ? 'etcds' : 'etcd'}://${this.endpoint}`;
  }

  get port() {
    return this.clientPort;
  }

  get pid() {
    return this.process?.pid;
  }

  get running() {
    return this.process !== undefined;
  }

  /** Where etcd writes its log (zap, errors only). */
  get logFile() {
    return join(this.dir, 'etcd.log');
  }

  /** Start the process without waiting for it (a cluster starts all its members, then waits). */
  spawn() {
    const client = `${this.tls ? 'https' : 'http'}://${this.endpoint}`;
    const tls = this.tls
      ? [
          '--cert-file',
          this.tls.cert,
          '--key-file',
          this.tls.key,
          ...(this.tls.clientAuth ? ['--client-cert-auth', '--trusted-ca-file', this.tls.ca] : []),
        ]
      : [];
    const peer = `http://127.0.0.1:${this.peerPort}`;
    const args = [
      '--name',
      this.name,
      '--data-dir',
      join(this.dir, 'data'),
      '--listen-client-urls',
      client,
      '--advertise-client-urls',
      client,
      '--listen-peer-urls',
      peer,
      '--initial-advertise-peer-urls',
      peer,
      '--initial-cluster',
      this.initialCluster,
      '--initial-cluster-state',
      'new',
      '--initial-cluster-token',
      // The same for every member of one cluster, and unlike any other cluster's (one machine, many tests).
      `dlock-test-${createHash('sha1').update(this.initialCluster).digest('hex').slice(0, 12)}`,
      '--logger',
      'zap',
      '--log-level',
      'error',
      ...tls,
      ...this.args,
    ];
    const log = openSync(this.logFile, 'a');
    try {
      const child = spawn('etcd', args, { env: cleanEnv(), stdio: ['ignore', log, log] });
      this.process = child;
      this.exited = new Promise((resolve) => child.once('exit', resolve));
    } finally {
      closeSync(log);
    }
  }

  /** Wait until the member answers a linearizable range (so a leader exists), or fail with its log. */
  async ready(timeoutMs = START_TIMEOUT_MS) {
    const child = this.process;
    try {
      await waitUntil(
        `etcd ${this.name} on ${this.endpoint} to answer`,
        async () => {
          if (child?.exitCode !== null) throw new Error(`etcd exited with ${child?.exitCode}`);
          await gateway(this.endpoint, '/v3/kv/range', { key: 'cmVhZHk=' }, 500, this.tls);
          return true;
        },
        { timeoutMs, everyMs: 20 },
      );
    } catch (error) {
      throw new Error(`${error.message}\n${this.log().slice(-2000)}`);
    }
  }

  /** Start the process (again: same ports and data directory) and wait until it answers. */
  async launch() {
    this.spawn();
    await this.ready();
  }

  /** What etcd has logged so far (errors only). */
  log() {
    try {
      return readFileSync(this.logFile, 'utf8');
    } catch {
      return '';
    }
  }

  /** One POST to this member's JSON gateway (`/v3/kv/range`, `/v3/maintenance/status` …). */
  request(path, body = {}, timeoutMs) {
    return gateway(this.endpoint, path, body, timeoutMs);
  }

  /** `etcdctl --endpoints <this member> …args` run to its end: { code, signal, stdout, stderr }. */
  etcdctl(...args) {
    return etcdctl(this.endpoint, ...args);
  }

  /** `etcdctl --endpoints <this member> …args` left running (a lock holder). */
  spawnEtcdctl(args, options) {
    return spawnEtcdctl(this.endpoint, args, options);
  }

  /** SIGSTOP: the member keeps its sockets but answers nothing (a GC pause, a hung VM). */
  pause() {
    this.process?.kill('SIGSTOP');
    this.paused = true;
  }

  resume() {
    if (this.paused) this.process?.kill('SIGCONT');
    this.paused = false;
  }

  /** SIGKILL, keeping the data directory (for `restart`); resolves once it is gone. */
  async stop() {
    const child = this.process;
    if (!child) return;
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGCONT');
      child.kill('SIGKILL');
    }
    await this.exited;
    this.process = undefined;
    this.paused = false;
  }

  /** Stop, then start again on the same ports and data directory (it rejoins its cluster). */
  async restart() {
    await this.stop();
    await this.launch();
  }

  /** Stop the member and remove its directory. */
  async close() {
    await this.stop();
    live.delete(this);
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** `close` without waiting (a runner's exit path): SIGKILL and remove the directory. */
  kill() {
    const child = this.process;
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGCONT');
      child.kill('SIGKILL');
    }
    this.process = undefined;
    live.delete(this);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Members started together under one --initial-cluster; `url` names every member (one dlock URL). */
export class EtcdCluster {
  constructor(members) {
    this.members = members;
  }

  /** `127.0.0.1:A,127.0.0.1:B,…` (etcdctl's --endpoints). */
  get endpoints() {
    return this.members.map((member) => member.endpoint).join(',');
  }

  /** `etcd://127.0.0.1:A,127.0.0.1:B,…` */
  get url() {
    return `etcd://${this.endpoints}`;
  }

  /**
   * The member that leads now: the one whose /v3/maintenance/status names itself as leader.
   * Waits through an election (a killed or paused leader); members that do not answer are skipped.
   */
  leader(timeoutMs = START_TIMEOUT_MS) {
    return waitUntil(
      'an etcd leader',
      async () => {
        for (const member of this.members) {
          if (!member.running || member.paused) continue;
          const status = await member.request('/v3/maintenance/status', {}, 500).catch(() => undefined);
          if (status?.leader !== undefined && status.leader === status.header?.member_id) return member;
        }
        return undefined;
      },
      { timeoutMs, everyMs: 20 },
    );
  }

  /** The members that do not lead now. */
  async followers() {
    const leader = await this.leader();
    return this.members.filter((member) => member !== leader);
  }

  /** `etcdctl --endpoints <every member> …args` run to its end. */
  etcdctl(...args) {
    return etcdctl(this.endpoints, ...args);
  }

  spawnEtcdctl(args, options) {
    return spawnEtcdctl(this.endpoints, args, options);
  }

  async close() {
    await Promise.all(this.members.map((member) => member.close()));
  }

  kill() {
    for (const member of this.members) member.kill();
  }
}

/** Start `count` members (3 for a cluster that survives one loss) at once, ready once each answers. */
export async function startEtcdCluster(count = 3, options = {}) {
  const free = await freePorts(2 * count);
  const ports = Array.from({ length: count }, (_, i) => [free[2 * i], free[2 * i + 1]]);
  const initialCluster = ports.map(([, peer], i) => `e${i + 1}=http://127.0.0.1:${peer}`).join(',');
  const members = ports.map(([client, peer], i) => new EtcdServer(`e${i + 1}`, client, peer, initialCluster, options));
  const cluster = new EtcdCluster(members);
  try {
    for (const member of members) member.spawn();
    await Promise.all(members.map((member) => member.ready()));
  } catch (error) {
    await cluster.close();
    throw error;
  }
  return cluster;
}
