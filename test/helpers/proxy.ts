// A TCP proxy between dlock and a real redis-server that can misbehave the way networks do:
// delay every reply, stall (hold all traffic until resumed), drop replies (requests still reach
// the server, so it acts on them, but no answer comes back), and reset every connection.
//
//   const proxy = await Proxy.start(redis.port); // dlock gets redis://127.0.0.1:${proxy.port}
//   proxy.delay(150); proxy.stall(); proxy.resume(); proxy.dropReplies(); proxy.reset();

import { createServer, connect, type Server, type Socket } from 'node:net';

type Mode = { kind: 'pass' } | { kind: 'stall' } | { kind: 'drop' };

interface Link {
  client: Socket;
  server: Socket;
  /** Replies and requests held while stalled, in order. */
  held: { to: Socket; data: Buffer }[];
  /** When the last delayed reply is due (keeps delayed replies in order). */
  lastDue: number;
}

export class Proxy {
  private readonly links = new Set<Link>();
  private delayMs = 0;
  private mode: Mode = { kind: 'pass' };

  private constructor(
    private readonly listener: Server,
    readonly targetPort: number,
  ) {}

  static async start(targetPort: number, targetHost = '127.0.0.1'): Promise<Proxy> {
    const listener = createServer();
    const proxy = new Proxy(listener, targetPort);
    listener.on('connection', (client) => proxy.accept(client, targetHost));
    await new Promise<void>((resolve, reject) => {
      listener.once('error', reject);
      listener.listen(0, '127.0.0.1', resolve);
    });
    return proxy;
  }

  get port(): number {
    return (this.listener.address() as { port: number }).port;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Every reply from the server reaches the client `ms` later (0: at once). */
  delay(ms: number): void {
    this.delayMs = ms;
  }

  /** Hold all traffic, both ways, until `resume()` (a hung link: nothing is lost). */
  stall(): void {
    this.mode = { kind: 'stall' };
  }

  /** Requests reach the server (it acts on them); its replies are thrown away until `resume()`. */
  dropReplies(): void {
    this.mode = { kind: 'drop' };
  }

  /** Back to passing traffic; what a stall held is delivered now. */
  resume(): void {
    this.mode = { kind: 'pass' };
    for (const link of this.links) for (const { to, data } of link.held.splice(0)) this.write(link, to, data);
  }

  /** Reset every open connection (RST both ways); new ones are accepted. */
  reset(): void {
    for (const link of this.links) {
      link.client.resetAndDestroy();
      link.server.resetAndDestroy();
    }
    this.links.clear();
  }

  async close(): Promise<void> {
    this.reset();
    await new Promise<void>((resolve) => this.listener.close(() => resolve()));
  }

  private accept(client: Socket, host: string): void {
    const server = connect(this.targetPort, host);
    const link: Link = { client, server, held: [], lastDue: 0 };
    this.links.add(link);
    const end = () => {
      this.links.delete(link);
      client.destroy();
      server.destroy();
    };
    client.on('error', end).on('close', end);
    server.on('error', end).on('close', end);
    client.on('data', (data) => this.forward(link, server, data, false));
    server.on('data', (data) => this.forward(link, client, data, true));
  }

  private forward(link: Link, to: Socket, data: Buffer, reply: boolean): void {
    if (this.mode.kind === 'stall') link.held.push({ to, data });
    else if (this.mode.kind === 'drop' && reply) return;
    else this.write(link, to, data, reply);
  }

  private write(link: Link, to: Socket, data: Buffer, reply = to === link.client): void {
    if (!reply || this.delayMs === 0) {
      to.write(data);
      return;
    }
    const due = Math.max(Date.now() + this.delayMs, link.lastDue);
    link.lastDue = due;
    setTimeout(() => to.destroyed || to.write(data), due - Date.now());
  }
}

/** A proxy to a server on 127.0.0.1:`targetPort`. */
export function startProxy(targetPort: number): Promise<Proxy> {
  return Proxy.start(targetPort);
}
