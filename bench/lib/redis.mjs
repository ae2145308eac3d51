// The bench's redis-server: the shared one (support/redis-server.mjs) plus what the load and
// handoff sections read from it: the version, the clients connected, and MONITOR.

import { Redis } from 'ioredis';
import { RedisServer as SharedRedisServer } from '../../support/redis-server.mjs';

export { freePort, killAllServers, waitForPort } from '../../support/redis-server.mjs';

export class RedisServer extends SharedRedisServer {
  /** One admin connection, kept for the server's life (the bench reads through it repeatedly). */
  client() {
    this.admin ??= super.client();
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
}

export function startServers(count) {
  return Promise.all(Array.from({ length: count }, () => RedisServer.start()));
}
