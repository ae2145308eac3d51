// Real redis-server processes on free 127.0.0.1 ports, shared by test/, bench/ and chaos/.
// Faults are injected the way they happen: SIGSTOP (pause), SIGKILL (stop), restart on the
// same port and directory. Every server started is registered, so `killAllServers` can clean
// up on any exit path of a runner (bench, chaos).

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect as connectTcp, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { waitUntil } from './wait-until.mjs';

/** A free TCP port on 127.0.0.1 (the OS picks it). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** true when something accepts TCP connections on 127.0.0.1:port. */
export function canConnect(port) {
  return new Promise((resolve) => {
    const socket = connectTcp(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

/** Wait until something listens on 127.0.0.1:port (`what` names it in the timeout error). */
export function waitForPort(port, what, timeoutMs = 10_000) {
  return waitUntil(`${what} on 127.0.0.1:${port} to start`, () => canConnect(port), { timeoutMs });
}

/** How a server keeps its data: none, or every acknowledged write fsync'd (survives SIGKILL). */
export const PERSISTENCE = {
  none: ['--save', '', '--appendonly', 'no'],
  'aof-always': ['--save', '', '--appendonly', 'yes', '--appendfsync', 'always'],
};

const live = new Set();

/** SIGKILL every server still running and remove its directory (synchronous: fits process 'exit'). */
export function killAllServers() {
  for (const server of live) server.kill();
}

export class RedisServer {
  constructor(port, options = {}) {
    this.port = port;
    /** Extra redis-server arguments; may be changed before a `launch` (replicaof after a failover). */
    this.args = options.args ?? [];
    this.persistence = options.persistence ?? 'none';
    this.dir = mkdtempSync(join(tmpdir(), 'dlock-redis-'));
    this.process = undefined;
    this.exited = Promise.resolve();
    this.paused = false;
    this.clients = [];
    live.add(this);
  }

  static async start(options = {}) {
    const server = new this(await freePort(), options);
    await server.launch();
    return server;
  }

  get url() {
    return `redis://127.0.0.1:${this.port}`;
  }

  get pid() {
    return this.process?.pid;
  }

  get running() {
    return this.process !== undefined;
  }

  /** Start the process (again: same port and directory) and wait until it accepts connections. */
  async launch() {
    const args = [
      '--port',
      String(this.port),
      '--bind',
      '127.0.0.1',
      '--dir',
      this.dir,
      ...PERSISTENCE[this.persistence],
      ...this.args,
    ];
    const child = spawn('redis-server', args, { stdio: 'ignore' });
    this.process = child;
    this.exited = new Promise((resolve) => child.once('exit', resolve));
    await waitUntil(`redis-server on 127.0.0.1:${this.port} to start`, () => {
      if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
      return canConnect(this.port);
    });
  }

  /** A plain client of its own for assertions and outside faults (DEL, FLUSHALL); closed by `close`. */
  client() {
    const client = new Redis({ port: this.port, host: '127.0.0.1', maxRetriesPerRequest: 1 });
    client.on('error', () => {});
    this.clients.push(client);
    return client;
  }

  /** One command on a connection of its own, closed right after (FLUSHALL, INFO). */
  async command(...args) {
    const client = new Redis({ port: this.port, host: '127.0.0.1', maxRetriesPerRequest: 0, lazyConnect: true });
    client.on('error', () => {});
    try {
      await client.connect();
      return await client.call(...args);
    } finally {
      client.disconnect();
    }
  }

  /** SIGSTOP: the server keeps its socket but answers nothing (a GC pause, a hung VM). */
  pause() {
    this.process?.kill('SIGSTOP');
    this.paused = true;
  }

  resume() {
    if (this.paused) this.process?.kill('SIGCONT');
    this.paused = false;
  }

  /** SIGKILL (no chance to save what the persistence mode has not written yet); resolves once it is gone. */
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

  /** Stop, then start again on the same port and directory. */
  async restart() {
    await this.stop();
    await this.launch();
  }

  /** Disconnect every client, stop the server and remove its directory. */
  async close() {
    for (const client of this.clients.splice(0)) client.disconnect();
    await this.stop();
    live.delete(this);
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** `close` without waiting (a runner's exit path). */
  kill() {
    for (const client of this.clients.splice(0)) client.disconnect();
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

/** Start `count` independent servers in parallel (Redlock). */
export function startServers(count, options = {}) {
  return Promise.all(Array.from({ length: count }, () => RedisServer.start(options)));
}
