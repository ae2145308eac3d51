// When dlock first reached a server: a forwarder in front of the server's port that notes the
// wall-clock time of each connection it accepts. An upper time bound measured from there (to
// dlock's exit, or to its error event's ts_ms) leaves out dlock's start-up, which takes up to
// ~1.5s on a loaded 2-core machine, and still covers the whole bound under test, whose clock
// starts just before that connection.

import { connect, createServer, type Server, type Socket } from 'node:net';

export class ConnectClock {
  /** Date.now() of each connection accepted, in order. */
  readonly connectedAt: number[] = [];
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    /** The port it listens on (known after `close` too). */
    readonly port: number,
  ) {}

  /** Listen on a free 127.0.0.1 port and forward every connection to `targetPort` there. */
  static async start(targetPort: number): Promise<ConnectClock> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const clock = new ConnectClock(server, (server.address() as { port: number }).port);
    server.on('connection', (client) => clock.forward(client, targetPort));
    return clock;
  }

  /** The first connection's time; fails when there was none. */
  get firstMs(): number {
    if (this.connectedAt.length === 0) throw new Error('no connection reached the server');
    return this.connectedAt[0];
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private forward(client: Socket, targetPort: number): void {
    this.connectedAt.push(Date.now());
    const server = connect(targetPort, '127.0.0.1');
    for (const socket of [client, server]) {
      this.sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => {
        this.sockets.delete(socket);
        client.destroy();
        server.destroy();
      });
    }
    client.pipe(server);
    server.pipe(client);
  }
}
