// Real redis-server processes on free 127.0.0.1 ports (the minimal part of
// test/helpers/redis.ts), with the faults the chaos suite injects: SIGSTOP/SIGCONT, SIGKILL and
// restart on the same port and directory, FLUSHALL.

import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { connect as connectTcp, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { sleep, track, trackDir, untrackDir, wallMs } from './procs.mjs';

/** How a server keeps its data across a restart. */
export const PERSISTENCE = {
  none: ['--save', '', '--appendonly', 'no'],
  /** Every acknowledged write is fsync'd before the reply: the fence counter survives a SIGKILL. */
  'aof-always': ['--save', '', '--appendonly', 'yes', '--appendfsync', 'always'],
};

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

function canConnect(port) {
  return new Promise((resolve) => {
    const socket = connectTcp(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

export class RedisServer {
  /** `args`: more redis-server options (replication); may be changed before a relaunch. */
  constructor(port, persistence, args = []) {
    this.port = port;
    this.persistence = persistence;
    this.args = args;
    this.dir = trackDir(mkdtempSync(join(tmpdir(), 'dlock-chaos-redis-')));
    this.process = undefined;
    this.paused = false;
  }

  static async start(persistence = 'none', args = []) {
    const server = new RedisServer(await freePort(), persistence, args);
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

  async launch() {
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir, '--maxmemory-policy', 'noeviction', ...PERSISTENCE[this.persistence], ...this.args];
    const child = track(spawn('redis-server', args, { stdio: 'ignore' }));
    this.process = child;
    this.exited = new Promise((resolve) => child.once('exit', resolve));
    const deadline = Date.now() + 10_000;
    while (!(await canConnect(this.port))) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`redis-server on 127.0.0.1:${this.port} did not start`);
      await sleep(10);
    }
  }

  /** SIGSTOP: the server keeps its socket but answers nothing (a hung VM, a long fork). */
  pause() {
    this.process?.kill('SIGSTOP');
    this.paused = true;
  }

  resume() {
    if (this.paused) this.process?.kill('SIGCONT');
    this.paused = false;
  }

  /** SIGKILL (no chance to save anything the persistence mode has not already written); resolves with the wall time it was gone. */
  async kill() {
    const child = this.process;
    if (!child) return wallMs();
    child.kill('SIGCONT');
    child.kill('SIGKILL');
    await this.exited;
    this.process = undefined;
    this.paused = false;
    return wallMs();
  }

  /** One command from an admin connection of its own (FLUSHALL, INFO). */
  async command(...args) {
    const client = new Redis({ port: this.port, host: '127.0.0.1', maxRetriesPerRequest: 0, enableOfflineQueue: true, lazyConnect: true });
    client.on('error', () => {});
    try {
      await client.connect();
      return await client.call(...args);
    } finally {
      client.disconnect();
    }
  }

  async close() {
    await this.kill();
    untrackDir(this.dir);
  }
}

export function startServers(count, persistence) {
  return Promise.all(Array.from({ length: count }, () => RedisServer.start(persistence)));
}
