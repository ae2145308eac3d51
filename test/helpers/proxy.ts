// A TCP proxy in front of a real redis-server, for faults that a server process cannot show
// on cue: a reply lost after the command ran, a stalled or slow link, a reset connection.
// It works on the bytes of each chunk (no RESP parsing), which is exact while the client has
// one request in flight on a connection, as dlock does.

import { createServer, connect as connectTcp, type Server, type Socket } from 'node:net';

interface Link {
  client: Socket;
  server: Socket;
  /** Replies are dropped from now on (a stalled connection after dropReplyTo). */
  silent?: boolean;
}

/** A one-shot rule: the reply to the first request matching `request` is dropped. */
interface DropRule {
  request: string | RegExp;
  /** Replies that do not count as "the reply" and pass (e.g. -NOSCRIPT: the script did not run). */
  pass?: RegExp;
  /**
   * After dropping: reset the connection (a load balancer, a network blip), reset it and refuse
   * new ones (the server went down right after running it), or leave it silent (a stall).
   */
  then: 'reset' | 'down' | 'stall';
  resolve: () => void;
  armed?: Link;
}

export class TcpProxy {
  private readonly links = new Set<Link>();
  private stalled = false;
  private delayMs = 0;
  private refusing = false;
  private rule: DropRule | undefined;

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  /** Listen on a free 127.0.0.1 port and forward every connection to `targetPort`. */
  static async start(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
    let proxy!: TcpProxy;
    const server = createServer((client) => proxy.accept(client, targetPort, targetHost));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    proxy = new TcpProxy(server, (server.address() as { port: number }).port);
    return proxy;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Connections open now. */
  get connections(): number {
    return this.links.size;
  }

  /**
   * Forward the first request that contains `request` (a string, or a RegExp over the chunk as
   * latin1 text), then drop its reply and reset or stall that connection. Resolves once a reply
   * was dropped: the server ran the command, the client never hears of it.
   */
  dropReplyTo(request: string | RegExp, options: { pass?: RegExp; then?: DropRule['then'] } = {}): Promise<void> {
    return new Promise((resolve) => {
      this.rule = { request, pass: options.pass, then: options.then ?? 'reset', resolve };
    });
  }

  /** Stop forwarding in both directions (bytes are held, connections stay open) until `resume`. */
  stall(): void {
    this.stalled = true;
    for (const { client, server } of this.links) {
      client.pause();
      server.pause();
    }
  }

  resume(): void {
    this.stalled = false;
    for (const { client, server } of this.links) {
      client.resume();
      server.resume();
    }
  }

  /** Hold every reply for `ms` before passing it on (0: no delay). */
  delay(ms: number): void {
    this.delayMs = ms;
  }

  /** Reset every open connection (RST), as a crashed peer or a restarted load balancer does. */
  reset(): void {
    for (const link of this.links) this.drop(link);
  }

  /** true: close new connections at once (the backend is down); false: forward them again. */
  refuse(refusing = true): void {
    this.refusing = refusing;
  }

  async close(): Promise<void> {
    this.reset();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private accept(client: Socket, port: number, host: string): void {
    if (this.refusing) {
      client.resetAndDestroy();
      return;
    }
    const server = connectTcp(port, host);
    const link: Link = { client, server };
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
    server.on('data', (chunk) => {
      if (link.silent) return;
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
      if (this.delayMs > 0) {
        server.pause();
        setTimeout(() => (client.write(chunk), this.stalled || server.resume()), this.delayMs);
      } else client.write(chunk);
    });
    const end = () => this.drop(link);
    client.on('error', end).on('close', end);
    server.on('error', end).on('close', end);
  }

  private drop(link: Link): void {
    if (!this.links.delete(link)) return;
    link.client.resetAndDestroy();
    link.server.destroy();
  }
}

function matches(request: string | RegExp, chunk: Buffer): boolean {
  return typeof request === 'string' ? chunk.includes(request) : request.test(chunk.toString('latin1'));
}
