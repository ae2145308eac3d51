// A fake etcd JSON gateway for the hostile tests: a node:http server on 127.0.0.1 that answers
// POST /v3/… with what a test scripts per path, including replies no etcd would send (forged
// fields, garbage, huge or endless bodies, a watch that misbehaves). By default it answers like a
// single etcd member on which the lock is free: the grant echoes the id and TTL asked, the txn
// that joins the line puts the key at revision 5 and reads it back first, keepalives renew to
// the granted TTL. It logs every request. Lock behaviour is tested against real etcd members;
// this only stands in for a gateway that lies or breaks.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/** A request as the fake received it: the path and the body parsed (undefined when not JSON). */
export interface FakeRequest {
  path: string;
  body: Record<string, any> | undefined;
  /** Date.now() when it arrived. */
  at: number;
}

/** What to answer: a JSON object (HTTP 200), or a function that writes the response itself. */
export type Answer = Record<string, unknown> | ((response: ServerResponse, request: IncomingMessage) => void);

/** Answers one request, or undefined for the default answer. */
export type Script = (request: FakeRequest, fake: FakeEtcd) => Answer | undefined;

export const b64 = (text: string | Buffer) => (typeof text === 'string' ? Buffer.from(text) : text).toString('base64');
export const header = (revision = '5') => ({ cluster_id: '1', member_id: '2', revision, raft_term: '2' });

/** Never answer: the connection stays open until the client gives up. */
export const HANG: Answer = () => {};

/** Headers and `body` (raw), with `status`. */
export function raw(status: number, body: string | Buffer): Answer {
  return (response) => {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(body);
  };
}

/** A body of `bytes` bytes of `{"x":"xxx…`, sent in 1 MiB chunks as the client reads them (never held whole). */
export function huge(bytes: number): Answer {
  return (response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    const chunk = Buffer.alloc(1 << 20, 'x');
    let left = bytes;
    const pump = () => {
      while (left > 0) {
        const piece = left >= chunk.length ? chunk : chunk.subarray(0, left);
        left -= piece.length;
        if (!response.write(piece)) return void response.once('drain', pump);
      }
      response.end();
    };
    response.write('{"x":"');
    response.on('error', () => {});
    pump();
  };
}

/** Headers and the start of a body, then nothing more, ever. */
export const ENDLESS: Answer = (response) => {
  response.writeHead(200, { 'content-type': 'application/json' });
  response.write('{"header":{"revision":"5"},');
};

/** etcd's answer to a range without a key (an empty key is a zero value, left out: not given). */
const NO_KEY = raw(
  400,
  '{"error":"etcdserver: key is not provided","message":"etcdserver: key is not provided","code":3}',
);

/** A range (alone or in a txn) whose key is empty or missing, which etcd refuses. */
function noKey({ path, body }: FakeRequest): boolean {
  const ranges =
    path === '/v3/kv/range'
      ? [body]
      : path === '/v3/kv/txn'
        ? [...(body?.success ?? []), ...(body?.failure ?? [])].map((op: any) => op?.request_range).filter(Boolean)
        : [];
  return ranges.some((range) => typeof range?.key !== 'string' || range.key === '');
}

export class FakeEtcd {
  readonly requests: FakeRequest[] = [];
  /** The lease granted last (decimal id) and its TTL (s), as the default answers use them. */
  lease = '0';
  ttl = '10';
  private readonly sockets = new Set<import('node:net').Socket>();

  private constructor(
    private readonly server: Server,
    private readonly script: Script,
  ) {}

  static async start(script: Script = () => undefined): Promise<FakeEtcd> {
    let fake: FakeEtcd | undefined;
    const server = createServer((request, response) => fake!.serve(request, response));
    fake = new FakeEtcd(server, script);
    server.on('connection', (socket) => {
      fake!.sockets.add(socket);
      socket.on('close', () => fake!.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  get port(): number {
    return (this.server.address() as { port: number }).port;
  }

  /** The URL dlock takes (`--redis etcd://…`). */
  get url(): string {
    return `etcd://127.0.0.1:${this.port}`;
  }

  /** How many requests went to `path`. */
  count(path: string): number {
    return this.requests.filter((one) => one.path === path).length;
  }

  private serve(request: IncomingMessage, response: ServerResponse): void {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = request.url ?? '';
      let body: Record<string, any> | undefined;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString()) as Record<string, any>;
      } catch {
        body = undefined;
      }
      const one = { path, body, at: Date.now() };
      this.requests.push(one);
      const answer = this.script(one, this) ?? (noKey(one) ? NO_KEY : this.honest(one));
      response.on('error', () => {});
      if (typeof answer === 'function') answer(response, request);
      else {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify(answer));
      }
    });
  }

  /** What a single member with a free lock answers. */
  private honest({ path, body }: FakeRequest): Answer {
    switch (path) {
      case '/v3/lease/grant':
        this.lease = String(body?.ID ?? '7');
        this.ttl = String(body?.TTL ?? '10');
        return { header: header(), ID: this.lease, TTL: this.ttl };
      case '/v3/lease/keepalive':
        return { result: { header: header(), ID: body?.ID, TTL: this.ttl } };
      case '/v3/lease/revoke':
        return { header: header() };
      case '/v3/lease/timetolive':
        return { header: header(), ID: body?.ID, TTL: this.ttl, grantedTTL: this.ttl };
      case '/v3/kv/txn': {
        const compare = body?.compare?.[0];
        if (compare?.target === 'CREATE' && body?.success?.[0]?.request_put) {
          // Joining the line: the key is put at revision 5 and is the first one.
          const kv = { key: compare.key, create_revision: '5', mod_revision: '5', version: '1', lease: this.lease };
          return {
            header: header(),
            succeeded: true,
            responses: [
              { response_put: { header: header() } },
              { response_range: { header: header(), kvs: [kv], count: '1' } },
            ],
          };
        }
        return { header: header(), succeeded: true, responses: [] };
      }
      case '/v3/kv/range':
        return { header: header() };
      case '/v3/kv/deleterange':
        return { header: header() };
      case '/v3/watch':
        return HANG;
      default:
        return raw(404, '404 page not found\n');
    }
  }

  close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
