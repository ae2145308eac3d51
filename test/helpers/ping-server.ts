// A local monitor implementing healthchecks.io's ping API (https://healthchecks.io/docs/http_api/):
// GET/POST <check>, <check>/start, <check>/fail, <check>/log, <check>/<exit status>, answered
// "OK". It records each request (path, method, body) and can be told to be slow, to hang (never
// answer), or to be down (a closed port: connection refused). Over https when given a certificate.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { freePort } from '../../support/redis-server.mjs';

export interface PingRequest {
  /** The path (a proxy's: the absolute URL), without the query. */
  path: string;
  /** The `rid` query parameter (healthchecks' run id), if any. */
  rid: string | undefined;
  method: string;
  body: string;
  /** The Authorization header, if any. */
  authorization: string | undefined;
  /** The User-Agent header, if any. */
  userAgent: string | undefined;
  /** The Content-Type header, if any. */
  contentType: string | undefined;
  /** Date.now() when it arrived. */
  atMs: number;
}

export type PingBehaviour =
  | { kind: 'ok' }
  | { kind: 'slow'; ms: number }
  | { kind: 'hang' }
  | { kind: 'status'; code: number }
  /** A check whose path starts with `from` answers `code` with a Location of `to` + the rest. */
  | { kind: 'redirect'; code: number; from: string; to: string };

export class PingServer {
  readonly requests: PingRequest[] = [];
  behaviour: PingBehaviour = { kind: 'ok' };
  private readonly hanging = new Set<ServerResponse>();

  private constructor(
    private readonly server: Server | undefined,
    readonly port: number,
    private readonly scheme: 'http' | 'https' = 'http',
  ) {}

  /** A server listening on a free loopback port; over https with `tls`'s certificate and key (PEM). */
  static async start(
    behaviour: PingBehaviour = { kind: 'ok' },
    tls?: { cert: string | Buffer; key: string | Buffer },
  ): Promise<PingServer> {
    let ping: PingServer | undefined = undefined;
    const handle = (request: IncomingMessage, response: ServerResponse) => ping!.handle(request, response);
    const server: Server = tls ? createTlsServer(tls, handle) : createServer(handle);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    ping = new PingServer(server, (server.address() as AddressInfo).port, tls ? 'https' : 'http');
    ping.behaviour = behaviour;
    return ping;
  }

  /** A port nothing listens on: every ping is refused. */
  static async down(): Promise<PingServer> {
    return new PingServer(undefined, await freePort());
  }

  /** The check's URL: pings go to <url>, <url>/start, ... */
  url(check = 'check'): string {
    return `${this.scheme}://127.0.0.1:${this.port}/ping/${check}`;
  }

  /** The paths pinged for `check`, after its URL: "/start", "", "/3", "/log". */
  paths(check = 'check'): string[] {
    const base = `/ping/${check}`;
    return this.requests.filter(({ path }) => path.startsWith(base)).map(({ path }) => path.slice(base.length));
  }

  /** The run ids (`?rid=`) of `check`'s pings, in order. */
  rids(check = 'check'): (string | undefined)[] {
    const base = `/ping/${check}`;
    return this.requests.filter(({ path }) => path.startsWith(base)).map(({ rid }) => rid);
  }

  /** The JSON bodies of `check`'s pings, in order. */
  bodies(check = 'check'): Record<string, unknown>[] {
    const base = `/ping/${check}`;
    return this.requests.filter(({ path }) => path.startsWith(base)).map(({ body }) => JSON.parse(body));
  }

  async close(): Promise<void> {
    for (const response of this.hanging) response.destroy();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private handle(request: IncomingMessage, response: ServerResponse): void {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      const { url = '', method = '', headers } = request;
      const { authorization, 'user-agent': userAgent, 'content-type': contentType } = headers;
      // A proxy is asked for the absolute URL: its origin is kept.
      const { origin, pathname, searchParams } = new URL(url, 'http://monitor');
      const path = url.startsWith('/') ? pathname : `${origin}${pathname}`;
      const rid = searchParams.get('rid') ?? undefined;
      this.requests.push({
        path,
        rid,
        method,
        body,
        authorization,
        userAgent,
        contentType,
        atMs: Date.now(),
      });
      const answer = (code = 200) =>
        response.writeHead(code, { 'content-type': 'text/plain' }).end(code === 200 ? 'OK' : 'error');
      const behaviour = this.behaviour;
      if (behaviour.kind === 'hang') this.hanging.add(response);
      else if (behaviour.kind === 'slow') setTimeout(answer, behaviour.ms);
      else if (behaviour.kind === 'status') answer(behaviour.code);
      else if (behaviour.kind === 'redirect' && url.startsWith(behaviour.from)) {
        const location = `${behaviour.to}${url.slice(behaviour.from.length)}`;
        response.writeHead(behaviour.code, { location }).end();
      } else answer();
    });
  }
}
