// The bench's redis-server: the shared one (support/redis-server.mjs) plus what the load and
// handoff sections read from it: the version, the clients connected, and MONITOR.

import { Redis } from 'ioredis';
import { RedisServer as SharedRedisServer } from '../../support/redis-server.mjs';
import { waitUntil } from '../../support/wait-until.mjs';
import { epochMs } from './clock.mjs';

/** `text` as a literal inside a Redis glob pattern (PUBSUB CHANNELS). */
const globLiteral = (text) => text.replace(/[\\*?[\]]/g, (c) => `\\${c}`);

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

  /**
   * How many dlock processes wait for `key`, as Redis sees them: the clients subscribed to the
   * key's channels (`<prefix>{key}:*`). Written for both ways of waiting: today every waiter
   * subscribes to the one `<prefix>{key}:released` channel (its NUMSUB counts them); with a
   * wake-one line each waiter subscribes to a channel of its own (`<prefix>{key}:wake:<token>`,
   * one channel per waiter). The larger of the two counts is the number of waiters.
   */
  async waitersOn(key, prefix = 'dlock:') {
    const base = `${prefix}{${key}}`;
    const channels = await this.client().pubsub('CHANNELS', `${globLiteral(base)}:*`);
    if (channels.length === 0) return 0;
    const reply = await this.client().pubsub('NUMSUB', ...channels);
    const counts = [];
    for (let i = 0; i < reply.length; i += 2) counts.push({ channel: reply[i], subscribers: Number(reply[i + 1]) });
    const busiest = Math.max(...counts.map((c) => c.subscribers));
    const ownChannels = counts.filter((c) => c.channel !== `${base}:released` && c.subscribers > 0).length;
    return Math.max(busiest, ownChannels);
  }

  /** Resolves once `count` waiters are subscribed for `key` (see waitersOn); polls Redis, nothing else to await. */
  waitForWaiters(key, count, timeoutMs = 60_000) {
    return waitUntil(`${count} waiters subscribed for ${key}`, async () => (await this.waitersOn(key)) >= count, {
      timeoutMs,
      everyMs: 5,
    });
  }

  /** Calls per command name from INFO commandstats (commands run inside Lua scripts included). */
  async commandCalls() {
    const info = await this.client().info('commandstats');
    const calls = {};
    for (const [, name, n] of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls[name] = Number(n);
    return calls;
  }

  /** Addresses ("ip:port") of every client connection except the bench's own. */
  async clientAddresses() {
    const self = /addr=(\S+)/.exec(await this.client().client('INFO'))?.[1];
    const list = await this.client().client('LIST');
    return new Set(
      [...list.matchAll(/addr=(\S+).*flags=(\S+)/g)]
        .filter(([, addr, flags]) => addr !== self && !flags.includes('O'))
        .map(([, addr]) => addr),
    );
  }

  /**
   * Start recording every command the server runs, from MONITOR: { ms (server clock, epoch ms),
   * name, key (first argument), source ("ip:port" of the client, or "lua" inside a script) }.
   * stop() waits until the server has shown everything sent before it, then returns the list.
   */
  async tap() {
    // A connection in monitor mode (what ioredis' monitor() opens), made here so its errors are
    // ours: when MONITOR's first lines arrive in the same read as its OK, ioredis parses them
    // before it switches to monitor mode and emits "Command queue state error", which made
    // monitor() reject and the whole bench fail. Those lines come before anything measured.
    const monitor = new Redis({ port: this.port, host: '127.0.0.1', monitor: true });
    monitor.on('error', () => {});
    await new Promise((resolve, reject) => {
      monitor.once('monitoring', resolve);
      monitor.once('end', () => reject(new Error(`MONITOR on port ${this.port}: the connection closed`)));
    });
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
    const from = epochMs();
    await new Promise((resolve) => setTimeout(resolve, ms));
    const to = epochMs();
    const all = await tap.stop();
    const commands = all.filter((c) => c.source !== 'lua');
    return { from, to, seconds: (to - from) / 1000, commands, inScripts: all.length - commands.length };
  }
}

export function startServers(count) {
  return Promise.all(Array.from({ length: count }, () => RedisServer.start()));
}
