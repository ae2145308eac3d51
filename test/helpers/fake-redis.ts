// A fake Redis server for the lying-server tests: RESP2 over TCP on 127.0.0.1, answering what
// dlock sends with replies each test scripts per command, including ones no Redis would send
// (malformed, huge, deeply nested), or none at all (hang), or a closed connection. It logs
// every command it receives. Lock behaviour is tested against real redis-server processes;
// this only stands in for a server that lies or breaks.

import { createServer, type Server, type Socket } from 'node:net';

/** Raw bytes sent as they are (malformed or huge RESP). */
export class Raw {
  constructor(readonly bytes: Buffer | string | (() => Iterable<Buffer>)) {}
}

/** A RESP error reply: "-<message>". */
export class ErrorReply {
  constructor(readonly message: string) {}
}

/** A reply in JS terms: string → bulk, number → integer, null → nil, array → array. */
export type Value = string | number | bigint | null | Value[] | ErrorReply | Raw | { simple: string };

/** What to do with one command: answer, say nothing (hang), or close the connection. */
export type Reply = Value | typeof HANG | typeof CLOSE;
export const HANG = Symbol('hang');
export const CLOSE = Symbol('close');

/** Answers one command (argv as strings, the name in upper case), or undefined for the default answer. */
export type Script = (argv: string[], conn: FakeConnection) => Reply | undefined;

export interface FakeConnection {
  id: number;
  /** Send an unsolicited message (pub/sub) on this connection. */
  push(value: Value): void;
  socket: Socket;
}

export function encode(value: Value): Buffer[] {
  if (value instanceof Raw) {
    const { bytes } = value;
    return typeof bytes === 'function' ? [...bytes()] : [Buffer.from(bytes)];
  }
  if (value instanceof ErrorReply) return [Buffer.from(`-${value.message}\r\n`)];
  if (value === null) return [Buffer.from('$-1\r\n')];
  if (typeof value === 'number' || typeof value === 'bigint') return [Buffer.from(`:${value}\r\n`)];
  if (typeof value === 'string') return [Buffer.from(`$${Buffer.byteLength(value)}\r\n${value}\r\n`)];
  if (Array.isArray(value)) return [Buffer.from(`*${value.length}\r\n`), ...value.flatMap(encode)];
  return [Buffer.from(`+${value.simple}\r\n`)];
}

/** `depth` arrays, each holding the next: "*1\r\n" repeated, ending in an integer. */
export function nested(depth: number): Raw {
  return new Raw(Buffer.concat([Buffer.from('*1\r\n'.repeat(depth)), Buffer.from(':1\r\n')]));
}

/** A bulk string of `bytes` bytes, produced in 1 MiB chunks (not held in memory whole). */
export function hugeBulk(bytes: number): Raw {
  return new Raw(function* () {
    yield Buffer.from(`$${bytes}\r\n`);
    const chunk = Buffer.alloc(1 << 20, 'x');
    for (let left = bytes; left > 0; left -= chunk.length) yield left >= chunk.length ? chunk : chunk.subarray(0, left);
    yield Buffer.from('\r\n');
  });
}

const OK = { simple: 'OK' };

/**
 * What a Redis 7 master answers to the commands dlock sends on connect; scripts (EVALSHA →
 * NOSCRIPT, then EVAL) are left to the test's script and answer an error by default.
 */
export function defaultReply(argv: string[]): Reply {
  const name = argv[0]?.toUpperCase();
  switch (name) {
    case 'HELLO':
      return [
        'server',
        'redis',
        'version',
        '7.2.0',
        'proto',
        2,
        'id',
        1,
        'mode',
        'standalone',
        'role',
        'master',
        'modules',
        [],
      ];
    case 'PING':
      return { simple: 'PONG' };
    case 'SELECT':
    case 'AUTH':
    case 'CLIENT':
      return OK;
    case 'INFO':
      return '# Replication\r\nrole:master\r\nconnected_slaves:0\r\n';
    case 'EVALSHA':
      return new ErrorReply('NOSCRIPT No matching script. Please use EVAL.');
    case 'SUBSCRIBE':
      return ['subscribe', argv[1], 1];
    case 'TYPE':
      return { simple: 'hash' };
    default:
      return new ErrorReply(`ERR unknown command '${argv[0]}' (fake server)`);
  }
}

export class FakeRedis {
  /** Every command received, in order, per connection id. */
  readonly commands: { conn: number; argv: string[] }[] = [];
  private readonly sockets = new Set<Socket>();
  /** Bytes sent to dlock, in total (a huge reply is cut short once dlock closes the connection). */
  bytesSent = 0;
  private nextId = 1;

  private constructor(
    private readonly server: Server,
    private readonly script: Script,
  ) {}

  static async start(script: Script = () => undefined): Promise<FakeRedis> {
    const server = createServer();
    const fake = new FakeRedis(server, script);
    server.on('connection', (socket) => fake.serve(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  get port(): number {
    return (this.server.address() as { port: number }).port;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** The names of the commands received (upper case), e.g. ["HELLO", "EVALSHA", "EVAL"]. */
  names(): string[] {
    return this.commands.map(({ argv }) => argv[0]);
  }

  /** How many connections are open now (dlock leaves none behind when it exits). */
  get openConnections(): number {
    return this.sockets.size;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private serve(socket: Socket): void {
    const id = this.nextId++;
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => {});
    let pending = Buffer.alloc(0);
    let closed = false;
    const conn: FakeConnection = { id, socket, push: (value) => void write(encode(value)) };
    // Write chunk by chunk, waiting for drain: a 100 MB reply is never in memory whole.
    let queue: Promise<void> = Promise.resolve();
    const write = (chunks: Iterable<Buffer>) => {
      queue = queue.then(async () => {
        for (const chunk of chunks) {
          if (closed || socket.destroyed) return;
          this.bytesSent += chunk.length;
          if (!socket.write(chunk))
            await new Promise<void>((resolve) => socket.once('drain', resolve).once('close', resolve));
        }
      });
    };
    socket.on('close', () => (closed = true));
    socket.on('data', (data) => {
      pending = Buffer.concat([pending, data]);
      for (;;) {
        const parsed = parseCommand(pending);
        if (!parsed) return;
        pending = pending.subarray(parsed.used);
        this.commands.push({ conn: id, argv: parsed.argv });
        const scripted = this.script(parsed.argv, conn);
        const reply = scripted === undefined ? defaultReply(parsed.argv) : scripted;
        if (reply === HANG) continue;
        if (reply === CLOSE) {
          queue = queue.then(() => void socket.destroy());
          return;
        }
        const value = reply;
        write({ [Symbol.iterator]: () => encode(value)[Symbol.iterator]() });
      }
    });
  }
}

/** One command (RESP array of bulk strings, or an inline command) from the front of `buffer`. */
function parseCommand(buffer: Buffer): { argv: string[]; used: number } | undefined {
  if (buffer.length === 0) return undefined;
  const lineEnd = (from: number) => {
    const at = buffer.indexOf('\r\n', from);
    return at < 0 ? undefined : at;
  };
  if (buffer[0] !== 0x2a) {
    const end = lineEnd(0);
    if (end === undefined) return undefined;
    const [name = '', ...rest] = buffer.subarray(0, end).toString().split(' ');
    return { argv: [name.toUpperCase(), ...rest], used: end + 2 };
  }
  let end = lineEnd(0);
  if (end === undefined) return undefined;
  const count = Number(buffer.subarray(1, end).toString());
  let at = end + 2;
  const argv: string[] = [];
  for (let i = 0; i < count; i++) {
    end = lineEnd(at);
    if (end === undefined) return undefined;
    const length = Number(buffer.subarray(at + 1, end).toString());
    const start = end + 2;
    if (buffer.length < start + length + 2) return undefined;
    argv.push(buffer.subarray(start, start + length).toString());
    if (i === 0) argv[0] = argv[0].toUpperCase();
    at = start + length + 2;
  }
  return { argv, used: at };
}
