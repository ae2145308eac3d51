// Real redis-server processes on free loopback ports, started and stopped by the tests.
// Faults are injected the way they happen: stop (SIGTERM/SIGKILL), pause (SIGSTOP), restart.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect as connectTcp } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';

/** A free TCP port on 127.0.0.1 (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connectTcp(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

export interface RedisOptions {
  /** Extra redis-server arguments, e.g. ['--appendonly', 'yes']. */
  args?: string[];
}

export class RedisServer {
  private process: ChildProcess | undefined;
  readonly dir = mkdtempSync(join(tmpdir(), 'dlock-redis-'));
  private clients: Redis[] = [];

  private constructor(
    readonly port: number,
    private readonly options: RedisOptions,
  ) {}

  static async start(options: RedisOptions = {}): Promise<RedisServer> {
    const server = new RedisServer(await freePort(), options);
    await server.launch();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get pid(): number | undefined {
    return this.process?.pid;
  }

  /** A plain client for assertions and for faults injected from outside (DEL, FLUSHALL). */
  client(): Redis {
    const client = new Redis({ port: this.port, host: '127.0.0.1', maxRetriesPerRequest: 1, lazyConnect: false });
    client.on('error', () => {});
    this.clients.push(client);
    return client;
  }

  private async launch(): Promise<void> {
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', this.dir, ...(this.options.args ?? [])];
    this.process = spawn('redis-server', args, { stdio: 'ignore' });
    const deadline = Date.now() + 10_000;
    while (!(await canConnect(this.port))) {
      if (Date.now() > deadline) throw new Error(`redis-server on ${this.port} did not start`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  /** SIGSTOP: the server keeps its socket but answers nothing (a GC pause, a hung VM). */
  pause(): void {
    this.process?.kill('SIGSTOP');
  }

  resume(): void {
    this.process?.kill('SIGCONT');
  }

  /** Stop the server (SIGKILL: no chance to save) and wait until it is gone. */
  async stop(): Promise<void> {
    const proc = this.process;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGCONT');
    proc.kill('SIGKILL');
    await exited;
    this.process = undefined;
  }

  /** Start again on the same port and directory (data survives only if persistence was on). */
  async restart(): Promise<void> {
    await this.stop();
    await this.launch();
  }

  async close(): Promise<void> {
    for (const client of this.clients) client.disconnect();
    this.clients = [];
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Start `count` independent servers in parallel (Redlock). */
export async function startServers(count: number, options: RedisOptions = {}): Promise<RedisServer[]> {
  return Promise.all(Array.from({ length: count }, () => RedisServer.start(options)));
}
