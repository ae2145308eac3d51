// A TCP proxy in front of a real redis-server, for faults a server process cannot show on cue:
// a slow link, a stall (bytes held, delivered on resume), replies lost after the command ran,
// reset or refused connections. Shared by test/ and chaos/. It works on the bytes of each
// chunk (no RESP parsing), which is exact while the client has one request in flight on a
// connection, as dlock does.

import { connect as connectTcp, createServer } from 'node:net';

export class TcpProxy {
  constructor(listener, port) {
    this.listener = listener;
    this.port = port;
    this.links = new Set();
    this.stalled = false;
    this.droppingReplies = false;
    this.delayMs = 0;
    this.refusing = false;
    /** The pending one-shot rule of `dropReplyTo`. */
    this.rule = undefined;
  }

  /** Listen on a free 127.0.0.1 port and forward every connection to `targetPort`. */
  static async start(targetPort, targetHost = '127.0.0.1') {
    let proxy;
    const listener = createServer((client) => proxy.accept(client, targetPort, targetHost));
    await new Promise((resolve, reject) => {
      listener.once('error', reject);
      listener.listen(0, '127.0.0.1', resolve);
    });
    proxy = new TcpProxy(listener, listener.address().port);
    return proxy;
  }

  get url() {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Connections open now. */
  get connections() {
    return this.links.size;
  }

  /**
   * Forward the first request that contains `request` (a string, or a RegExp over the chunk as
   * latin1 text), then drop its reply and reset ('reset', default), reset and refuse new
   * connections ('down'), or stall ('stall') that connection. `pass`: replies that do not count
   * as "the reply" (-NOSCRIPT: the script did not run). Resolves once a reply was dropped.
   */
  dropReplyTo(request, options = {}) {
    return new Promise((resolve) => {
      this.rule = { request, pass: options.pass, then: options.then ?? 'reset', resolve, armed: undefined };
    });
  }

  /** Drop every reply until `resume` (the server still acts on the requests). */
  dropReplies() {
    this.droppingReplies = true;
  }

  /** Stop forwarding in both directions (bytes are held, connections stay open) until `resume`. */
  stall() {
    this.stalled = true;
    for (const { client, server } of this.links) {
      client.pause();
      server.pause();
    }
  }

  /** End a stall and `dropReplies`. */
  resume() {
    this.stalled = false;
    this.droppingReplies = false;
    for (const { client, server } of this.links) {
      client.resume();
      server.resume();
    }
  }

  /** Deliver every reply `ms` after it arrived, in order (0: no delay). */
  delay(ms) {
    this.delayMs = ms;
  }

  /** Reset every open connection (RST), as a crashed peer or a restarted load balancer does. */
  reset() {
    for (const link of this.links) this.drop(link);
  }

  /** true: reset new connections at once (the backend is down); false: forward them again. */
  refuse(refusing = true) {
    this.refusing = refusing;
  }

  async close() {
    this.reset();
    await new Promise((resolve) => this.listener.close(resolve));
  }

  accept(client, port, host) {
    if (this.refusing) {
      client.resetAndDestroy();
      return;
    }
    const server = connectTcp(port, host);
    const link = { client, server, silent: false, lastDue: 0 };
    this.links.add(link);
    if (this.stalled) {
      client.pause();
      server.pause();
    }
    client.on('data', (chunk) => {
      const rule = this.rule;
      if (rule && !rule.armed && matches(rule.request, chunk)) rule.armed = link;
      server.write(chunk);
    });
    server.on('data', (chunk) => this.reply(link, chunk));
    const end = () => this.drop(link);
    client.on('error', end).on('close', end);
    server.on('error', end).on('close', end);
  }

  reply(link, chunk) {
    if (link.silent || this.droppingReplies) return;
    const rule = this.rule;
    if (rule?.armed === link && !rule.pass?.test(chunk.toString('latin1'))) {
      this.rule = undefined;
      if (rule.then === 'stall') link.silent = true;
      else this.drop(link);
      if (rule.then === 'down') this.refusing = true;
      rule.resolve();
      return;
    }
    if (rule?.armed === link) rule.armed = undefined; // a passed reply: wait for the request again
    if (this.delayMs === 0) {
      link.client.write(chunk);
      return;
    }
    const due = Math.max(Date.now() + this.delayMs, link.lastDue);
    link.lastDue = due;
    setTimeout(() => link.client.destroyed || link.client.write(chunk), due - Date.now());
  }

  drop(link) {
    if (!this.links.delete(link)) return;
    link.client.resetAndDestroy();
    link.server.destroy();
  }
}

function matches(request, chunk) {
  return typeof request === 'string' ? chunk.includes(request) : request.test(chunk.toString('latin1'));
}
