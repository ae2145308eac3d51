// Real redis-server processes on free loopback ports (the minimal part of test/helpers/redis.ts),
// plus the INFO commandstats reading the load section needs.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect as connectTcp, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';

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

export function canConnect(port) {
  return new Promise((resolve) => {
    const socket = connectTcp(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

/** Wait until something listens on 127.0.0.1:port, or fail after `timeoutMs`. */
export async function waitForPort(port, what, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await canConnect(port))) {
    if (Date.now() > deadline) throw new Error(`${what} on port ${port} did not start`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const running = new Set();

/** SIGKILL every server still running (the bench's exit path, also after an error). */
export function killAllServers() {
  for (const server of running) server.kill();
}

export class RedisServer {
  constructor(port) {
    this.port = port;
    this.dir = mkdtempSync(join(tmpdir(), 'dlock-bench-redis-'));
    this.process = undefined;
    this.admin = undefined;
  }

  static async start() {
    const server = new RedisServer(await freePort());
    server.process = spawn('redis-server', ['--port', String(server.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', server.dir], { stdio: 'ignore' });
    running.add(server);
    await waitForPort(server.port, 'redis-server');
    return server;
  }

  get url() {
    return `redis://127.0.0.1:${this.port}`;
  }

  client() {
    if (!this.admin) {
      this.admin = new Redis({ port: this.port, host: '127.0.0.1', maxRetriesPerRequest: 1 });
      this.admin.on('error', () => {});
    }
    return this.admin;
  }

  async version() {
    const info = await this.client().info('server');
    return /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown';
  }

  /** Addresses ("ip:port") of every client connection except the bench's own. */
  async clientAddresses() {
    const self = /addr=(\S+)/.exec(await this.client().client('INFO'))?.[1];
    const list = await this.client().client('LIST');
    return new Set([...list.matchAll(/addr=(\S+).*flags=(\S+)/g)].filter(([, addr, flags]) => addr !== self && !flags.includes('O')).map(([, addr]) => addr));
  }

  /**
   * Start recording every command the server runs, from MONITOR: { ms (server clock, epoch ms),
   * name, key (first argument), source ("ip:port" of the client, or "lua" inside a script) }.
   * stop() waits until the server has shown everything sent before it, then returns the list.
   */
  async tap() {
    // monitor() opens a connection of its own; this client itself never connects.
    const monitor = await new Redis({ port: this.port, host: '127.0.0.1', lazyConnect: true }).monitor();
    monitor.on('error', () => {});
    const commands = [];
    const marker = `bench-tap-${Math.random()}`;
    let sawMarker;
    const seen = new Promise((resolve) => (sawMarker = resolve));
    monitor.on('monitor', (time, args, source) => {
      const [seconds, micros = '0'] = String(time).split('.');
      const name = String(args[0]).toLowerCase();
      if (name === 'echo' && args[1] === marker) return sawMarker();
      commands.push({ ms: Number(seconds) * 1000 + Number(micros.padEnd(6, '0')) / 1000, name, key: args[1], source });
    });
    return {
      stop: async () => {
        await this.client().echo(marker);
        await seen;
        monitor.disconnect();
        return commands;
      },
    };
  }

  /**
   * The commands clients send during `ms`. Calls made inside Lua scripts (source "lua") are
   * counted apart: they are not round trips (INFO commandstats counts them like any other).
   */
  async monitor(ms) {
    const tap = await this.tap();
    const from = performance.timeOrigin + performance.now();
    await new Promise((resolve) => setTimeout(resolve, ms));
    const to = performance.timeOrigin + performance.now();
    const all = await tap.stop();
    const commands = all.filter((c) => c.source !== 'lua');
    return { from, to, seconds: (to - from) / 1000, commands, inScripts: all.length - commands.length };
  }

  kill() {
    this.admin?.disconnect();
    this.admin = undefined;
    if (this.process && this.process.exitCode === null && this.process.signalCode === null) this.process.kill('SIGKILL');
    running.delete(this);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export function startServers(count) {
  return Promise.all(Array.from({ length: count }, () => RedisServer.start()));
}
