// POSTs to etcd's JSON gateway with the runtime's own HTTP client: node:http(s) in the npm build
// (Node's fetch costs 30-100 ms on its first use, measured: docs/operations/etcd.md), Bun's fetch in
// the binary (it starts at once there). One request, one reply; a watch reads its reply as a
// stream of lines. Nothing here knows etcd: gateway.ts does.

import type { Agent, IncomingMessage, RequestOptions } from 'node:http';
import { TimeoutError } from '../../clock.js';
import type { TlsFiles } from '../../tls-files.js';
import type { Endpoint } from './connection.js';

/** A reply larger than this is refused (a listing of many locks fits well within it). */
export const MAX_REPLY_BYTES = 64 * 1024 * 1024;

/** A reply past MAX_REPLY_BYTES: the server answered, and will answer the same again. */
export class ReplyTooLarge extends Error {
  constructor() {
    super(`a reply larger than ${MAX_REPLY_BYTES} bytes`);
  }
}

/** A line of a watch longer than this is refused (a watch event of one key is small). */
const MAX_LINE_BYTES = 1024 * 1024;

export interface Reply {
  status: number;
  body: string;
}

export interface Transport {
  /** POST `body` to `path`; rejects on a transport failure, TimeoutError after `timeoutMs`. */
  post(
    endpoint: Endpoint,
    path: string,
    body: string,
    headers: Record<string, string>,
    timeoutMs: number,
  ): Promise<Reply>;
  /**
   * POST and read the reply line by line (a watch) until it ends, `signal` aborts, or `onLine`
   * returns true; resolves with the HTTP status. Lines are handed over as they arrive, each with
   * the reply's status (an error page is not a watch).
   */
  stream(
    endpoint: Endpoint,
    path: string,
    body: string,
    headers: Record<string, string>,
    signal: AbortSignal,
    onLine: (line: string, status: number) => boolean,
  ): Promise<number>;
  close(): void;
}

export function transportFor(tls: boolean, files: TlsFiles | undefined): Transport {
  return process.versions.bun !== undefined ? new FetchTransport(tls, files) : new NodeTransport(tls, files);
}

/** Splits a stream's chunks into lines; a line longer than MAX_LINE_BYTES is an error. */
class Lines {
  private pending = '';

  constructor(private readonly onLine: (line: string) => boolean) {}

  /** true once onLine asked to stop. */
  push(chunk: string): boolean {
    this.pending += chunk;
    for (let at = this.pending.indexOf('\n'); at >= 0; at = this.pending.indexOf('\n')) {
      const line = this.pending.slice(0, at);
      this.pending = this.pending.slice(at + 1);
      if (line.trim() !== '' && this.onLine(line)) return true;
    }
    if (this.pending.length > MAX_LINE_BYTES) throw new Error(`a watch line longer than ${MAX_LINE_BYTES} bytes`);
    return false;
  }

  end(): boolean {
    const rest = this.pending;
    this.pending = '';
    return rest.trim() !== '' && this.onLine(rest);
  }
}

class NodeTransport implements Transport {
  private agent: Agent | undefined;

  constructor(
    private readonly tls: boolean,
    private readonly files: TlsFiles | undefined,
  ) {}

  private options(endpoint: Endpoint, path: string, headers: Record<string, string>, body: string): RequestOptions {
    const http = this.module();
    // One connection kept open for the requests of a run (a renewal every ttl/3 reuses it).
    this.agent ??= new http.Agent({ keepAlive: true });
    return {
      host: endpoint.host,
      port: endpoint.port,
      path,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers },
      ...(this.tls ? { ...this.files, servername: isIpLiteral(endpoint.host) ? undefined : endpoint.host } : {}),
    };
  }

  private module(): typeof import('node:https') {
    return process.getBuiltinModule(this.tls ? 'node:https' : 'node:http') as typeof import('node:https');
  }

  post(endpoint: Endpoint, path: string, body: string, headers: Record<string, string>, timeoutMs: number) {
    const options = { ...this.options(endpoint, path, headers, body), agent: this.agent };
    return new Promise<Reply>((resolve, reject) => {
      const request = this.module().request(options, (response: IncomingMessage) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_REPLY_BYTES) request.destroy(new ReplyTooLarge());
          else chunks.push(chunk);
        });
        response.on('error', reject);
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      });
      const timer = setTimeout(() => request.destroy(new TimeoutError(timeoutMs)), timeoutMs);
      request.on('close', () => clearTimeout(timer));
      request.on('error', reject);
      request.end(body);
    });
  }

  stream(
    endpoint: Endpoint,
    path: string,
    body: string,
    headers: Record<string, string>,
    signal: AbortSignal,
    onLine: (line: string, status: number) => boolean,
  ): Promise<number> {
    // A connection of its own: a watch holds it for as long as it waits.
    const options = { ...this.options(endpoint, path, headers, body), agent: false as const };
    return new Promise<number>((resolve, reject) => {
      if (signal.aborted) return resolve(0);
      const request = this.module().request(options, (response: IncomingMessage) => {
        const status = response.statusCode ?? 0;
        const lines = new Lines((line) => onLine(line, status));
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          try {
            if (lines.push(chunk)) finish(status);
          } catch (error) {
            request.destroy(error as Error);
          }
        });
        response.on('error', reject);
        response.on('end', () => {
          lines.end();
          finish(status);
        });
      });
      const finish = (status: number) => {
        signal.removeEventListener('abort', abort);
        request.destroy();
        resolve(status);
      };
      const abort = () => finish(0);
      signal.addEventListener('abort', abort, { once: true });
      request.on('error', (error) => {
        signal.removeEventListener('abort', abort);
        if (signal.aborted) resolve(0);
        else reject(error);
      });
      request.end(body);
    });
  }

  close(): void {
    this.agent?.destroy();
  }
}

class FetchTransport implements Transport {
  private readonly controllers = new Set<AbortController>();

  constructor(
    private readonly tls: boolean,
    private readonly files: TlsFiles | undefined,
  ) {}

  private init(body: string, headers: Record<string, string>, signal: AbortSignal): RequestInit {
    const tls = this.files ? { tls: { ...this.files } } : {};
    return { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers }, signal, ...tls };
  }

  private url(endpoint: Endpoint, path: string): string {
    const host = endpoint.host.includes(':') ? `[${endpoint.host}]` : endpoint.host;
    return `${this.tls ? 'https' : 'http'}://${host}:${endpoint.port}${path}`;
  }

  async post(endpoint: Endpoint, path: string, body: string, headers: Record<string, string>, timeoutMs: number) {
    const controller = new AbortController();
    this.controllers.add(controller);
    const timer = setTimeout(() => controller.abort(new TimeoutError(timeoutMs)), timeoutMs);
    try {
      const response = await fetch(this.url(endpoint, path), this.init(body, headers, controller.signal));
      const reader = response.body?.getReader();
      const decoder = new TextDecoder();
      let text = '';
      let size = 0;
      for (;;) {
        const chunk = reader ? await reader.read() : { done: true as const, value: undefined };
        if (chunk.done) break;
        size += chunk.value.length;
        if (size > MAX_REPLY_BYTES) throw new ReplyTooLarge();
        text += decoder.decode(chunk.value, { stream: true });
      }
      return { status: response.status, body: text + decoder.decode() };
    } catch (error) {
      throw controller.signal.aborted && controller.signal.reason instanceof TimeoutError
        ? controller.signal.reason
        : error;
    } finally {
      clearTimeout(timer);
      this.controllers.delete(controller);
    }
  }

  async stream(
    endpoint: Endpoint,
    path: string,
    body: string,
    headers: Record<string, string>,
    signal: AbortSignal,
    onLine: (line: string, status: number) => boolean,
  ): Promise<number> {
    const controller = new AbortController();
    const abort = () => controller.abort();
    if (signal.aborted) return 0;
    signal.addEventListener('abort', abort, { once: true });
    this.controllers.add(controller);
    try {
      const response = await fetch(this.url(endpoint, path), this.init(body, headers, controller.signal));
      const reader = response.body?.getReader();
      if (!reader) return response.status;
      const lines = new Lines((line) => onLine(line, response.status));
      const decoder = new TextDecoder();
      for (;;) {
        const chunk = await reader.read();
        if (chunk.done) {
          lines.end();
          return response.status;
        }
        if (lines.push(decoder.decode(chunk.value, { stream: true }))) return response.status;
      }
    } catch (error) {
      if (signal.aborted) return 0;
      throw error;
    } finally {
      signal.removeEventListener('abort', abort);
      controller.abort();
      this.controllers.delete(controller);
    }
  }

  close(): void {
    for (const controller of this.controllers) controller.abort();
  }
}

function isIpLiteral(host: string): boolean {
  return /^[\d.]+$/.test(host) || host.includes(':');
}
