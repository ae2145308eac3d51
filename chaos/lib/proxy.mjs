// A TCP proxy between the workers' dlock and a real redis-server (the chaos copy of
// test/helpers/proxy.ts): delay every reply, stall all traffic (held, delivered on resume),
// drop replies (the server still acts on the requests), reset every connection.

import { connect, createServer } from 'node:net';

export class Proxy {
  constructor(listener, targetPort) {
    this.listener = listener;
    this.targetPort = targetPort;
    this.links = new Set();
    this.delayMs = 0;
    this.mode = 'pass';
  }

  static async start(targetPort) {
    const listener = createServer();
    const proxy = new Proxy(listener, targetPort);
    listener.on('connection', (client) => proxy.accept(client));
    await new Promise((resolve, reject) => {
      listener.once('error', reject);
      listener.listen(0, '127.0.0.1', resolve);
    });
    return proxy;
  }

  get port() {
    return this.listener.address().port;
  }

  get url() {
    return `redis://127.0.0.1:${this.port}`;
  }

  delay(ms) {
    this.delayMs = ms;
  }

  stall() {
    this.mode = 'stall';
  }

  dropReplies() {
    this.mode = 'drop';
  }

  resume() {
    this.mode = 'pass';
    for (const link of this.links) for (const { to, data } of link.held.splice(0)) this.write(link, to, data);
  }

  reset() {
    for (const link of this.links) {
      link.client.resetAndDestroy();
      link.server.resetAndDestroy();
    }
    this.links.clear();
  }

  async close() {
    this.reset();
    await new Promise((resolve) => this.listener.close(resolve));
  }

  accept(client) {
    const server = connect(this.targetPort, '127.0.0.1');
    const link = { client, server, held: [], lastDue: 0 };
    this.links.add(link);
    const end = () => {
      this.links.delete(link);
      client.destroy();
      server.destroy();
    };
    client.on('error', end).on('close', end);
    server.on('error', end).on('close', end);
    client.on('data', (data) => this.forward(link, server, data));
    server.on('data', (data) => this.forward(link, client, data));
  }

  forward(link, to, data) {
    if (this.mode === 'stall') link.held.push({ to, data });
    else if (this.mode === 'drop' && to === link.client) return;
    else this.write(link, to, data);
  }

  write(link, to, data) {
    if (to !== link.client || this.delayMs === 0) {
      to.write(data);
      return;
    }
    const due = Math.max(Date.now() + this.delayMs, link.lastDue);
    link.lastDue = due;
    setTimeout(() => to.destroyed || to.write(data), due - Date.now());
  }
}
