// etcd's v3 JSON gateway (POST /v3/…, base64 keys, int64 as strings, zero values left out), over
// the endpoints of one cluster: a request goes to the endpoint that answered last and fails over
// to the next when it cannot be reached; etcd's auth token is fetched when a user is given and
// fetched again when etcd says it expired. Replies are untrusted: every field a caller reads is
// checked where it is read (codec.ts), and an error reply becomes a failure in dlock's words.

import { now, TimeoutError } from '../../clock.js';
import type { MemberFailure } from '../../backend/failure.js';
import { printable } from '../../untrusted.js';
import type { EtcdConnection, Endpoint } from './connection.js';
import { isObject, type Json } from './codec.js';
import { ReplyTooLarge, transportFor, type Transport } from './transport.js';

/** gRPC codes as the gateway returns them in `code`. */
export const CODE = {
  invalidArgument: 3,
  deadlineExceeded: 4,
  notFound: 5,
  alreadyExists: 6,
  permissionDenied: 7,
  failedPrecondition: 9,
  outOfRange: 11,
  unavailable: 14,
  unauthenticated: 16,
} as const;

/** A request that failed: as a member failure for messages, and etcd's code when it answered with one. */
export class GatewayError extends Error {
  constructor(
    readonly failure: MemberFailure,
    /** etcd's gRPC code; undefined when no answer came. */
    readonly code?: number,
  ) {
    super(failure.reason);
  }
}

/** The least time an attempt on one endpoint gets before the next endpoint is tried. */
const ATTEMPT_FLOOR_MS = 250;

/** Codes an answer may give when the member cannot serve now (no leader, shutting down): try another. */
const TRY_ANOTHER = new Set<number>([CODE.unavailable, CODE.deadlineExceeded]);

export class Gateway {
  private readonly transport: Transport;
  /** The endpoint that answered last: requests go there first. */
  private current = 0;
  private token: string | undefined;
  private authenticating: Promise<string> | undefined;

  constructor(readonly connection: Pick<EtcdConnection, 'endpoints' | 'tls' | 'tlsFiles' | 'user' | 'password'>) {
    this.transport = transportFor(connection.tls, connection.tlsFiles);
  }

  /** The endpoint requests go to now, for messages. */
  get label(): string {
    return this.connection.endpoints[this.current]!.label;
  }

  /**
   * POST `body` to `path` within `timeoutMs` across the endpoints; the reply's JSON object.
   * Throws GatewayError: an error reply (with etcd's code), or no endpoint answered in time.
   */
  async call(path: string, body: Json, timeoutMs: number): Promise<Record<string, unknown>> {
    const text = JSON.stringify(body);
    const deadline = now() + timeoutMs;
    const { endpoints } = this.connection;
    let reauthenticated = false;
    let resent = false;
    let last: GatewayError | undefined;
    for (let tried = 0; tried < endpoints.length || !last;) {
      const index = this.current;
      const endpoint = endpoints[index]!;
      const left = Math.floor(deadline - now());
      if (left <= 0 && last) throw last;
      const remaining = endpoints.length - tried;
      const attemptMs = Math.max(1, remaining > 1 ? Math.min(left, Math.max(ATTEMPT_FLOOR_MS, left / 2)) : left);
      try {
        const headers = await this.headers(attemptMs);
        const reply = await this.transport.post(endpoint, path, text, headers, attemptMs);
        const json = parse(reply.body);
        const code = errorCode(reply.status, json);
        if (code === undefined && isObject(json)) return json;
        const error = answered(endpoint.label, reply.status, json);
        if (code === CODE.unauthenticated && this.connection.user !== undefined && !reauthenticated) {
          // The token expired (--auth-token-ttl, 300 s idle by default): once more with a new one.
          reauthenticated = true;
          this.token = undefined;
          continue;
        }
        // etcd's own refusal stands; a reply that is not etcd's (an error page, another server): the next endpoint.
        if (error.failure.errorReply && !(code !== undefined && TRY_ANOTHER.has(code))) throw error;
        last = error;
      } catch (error) {
        if (error instanceof GatewayError && error.code !== undefined && !TRY_ANOTHER.has(error.code)) throw error;
        last = error instanceof GatewayError ? error : unreached(endpoint.label, error);
        if (last.failure.permanent && last.failure.errorReply) throw last;
        // A kept-alive connection the member closed as it was reused: once more, on a new one.
        if (!resent && /^connection reset$|socket hang up/.test(last.failure.reason)) {
          resent = true;
          continue;
        }
      }
      tried++;
      this.rotateFrom(endpoint);
    }
    throw last;
  }

  /**
   * Watch from `request` (a create_request) on the current endpoint until `onMessage` returns true,
   * the stream ends, or `signal` aborts; resolves true when onMessage asked to stop. A stream that
   * ends is not an event: the caller reads again and re-watches. Throws GatewayError when it cannot.
   */
  async watch(
    request: Json,
    signal: AbortSignal,
    connectTimeoutMs: number,
    onMessage: (result: Record<string, unknown>) => boolean,
  ): Promise<boolean> {
    const endpoint = this.connection.endpoints[this.current]!;
    const headers = await this.headers(connectTimeoutMs);
    let stopped = false;
    let failure: GatewayError | undefined;
    try {
      const status = await this.transport.stream(
        endpoint,
        '/v3/watch',
        JSON.stringify(request),
        headers,
        signal,
        (line, status) => {
          const json = parse(line);
          const code = errorCode(status, json);
          if (code !== undefined || !isObject(json) || !isObject(json.result)) {
            failure = answered(endpoint.label, status, json);
            return true;
          }
          const result = json.result;
          if (result.canceled === true) {
            // A watch refused (no permission, a token etcd no longer knows, a compacted revision).
            const reason = typeof result.cancel_reason === 'string' ? result.cancel_reason : 'the watch was canceled';
            if (/Unauthenticated|auth token/i.test(reason)) this.token = undefined;
            failure = new GatewayError(
              {
                label: endpoint.label,
                reason: printable(reason.slice(0, 256)),
                permanent: false,
                reached: true,
                errorReply: true,
              },
              CODE.failedPrecondition,
            );
            return true;
          }
          stopped = onMessage(result);
          return stopped;
        },
      );
      if (status !== 200 && status !== 0 && !failure) failure = answered(endpoint.label, status, undefined);
    } catch (error) {
      if (signal.aborted) return false;
      this.rotateFrom(endpoint);
      throw unreached(endpoint.label, error);
    }
    // Not etcd's own answer (a proxy's error page, an endpoint that is not etcd): the next endpoint then.
    if (failure && !failure.failure.errorReply) this.rotateFrom(endpoint);
    if (failure) throw failure;
    return stopped;
  }

  close(): void {
    this.transport.close();
  }

  /** Requests go to the next endpoint, unless another request moved on from `endpoint` already. */
  private rotateFrom(endpoint: Endpoint): void {
    const { endpoints } = this.connection;
    if (endpoints[this.current] === endpoint) this.current = (this.current + 1) % endpoints.length;
  }

  /** The Authorization header (etcd takes the bare token), authenticating first when a user is given. */
  private async headers(timeoutMs: number): Promise<Record<string, string>> {
    const { user, password } = this.connection;
    if (user === undefined) return {};
    this.token ??= await (this.authenticating ??= this.authenticate(user, password ?? '', timeoutMs).finally(
      () => (this.authenticating = undefined),
    ));
    return { authorization: this.token };
  }

  private async authenticate(user: string, password: string, timeoutMs: number): Promise<string> {
    const endpoint = this.connection.endpoints[this.current]!;
    let reply;
    try {
      reply = await this.transport.post(
        endpoint,
        '/v3/auth/authenticate',
        JSON.stringify({ name: user, password }),
        {},
        timeoutMs,
      );
    } catch (error) {
      throw unreached(endpoint.label, error);
    }
    const json = parse(reply.body);
    const code = errorCode(reply.status, json);
    if (code !== undefined) {
      const error = answered(endpoint.label, reply.status, json);
      // Wrong credentials, or auth not enabled: no retry changes it.
      throw TRY_ANOTHER.has(code) ? error : new GatewayError({ ...error.failure, permanent: true }, code);
    }
    const token = isObject(json) ? json.token : undefined;
    if (typeof token !== 'string' || token === '' || token.length > 4096 || !/^[\x21-\x7e]+$/.test(token)) {
      throw new GatewayError({
        label: endpoint.label,
        reason: 'authenticate answered without a token',
        permanent: true,
        reached: true,
        errorReply: true,
      });
    }
    return token;
  }
}

/** The reply's JSON, or undefined when it is not JSON. */
function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** etcd's gRPC code when the reply is an error (any status but 200, or an `error` field); undefined when not. */
function errorCode(status: number, json: unknown): number | undefined {
  const code = isObject(json) && typeof json.code === 'number' && Number.isInteger(json.code) ? json.code : undefined;
  if (status === 200 && !(isObject(json) && 'error' in json)) return undefined;
  return code ?? (status === 401 ? CODE.unauthenticated : status === 403 ? CODE.permissionDenied : -1);
}

/** An error reply as a failure: etcd's own words when it gave them (printable, cut), else the HTTP status. */
function answered(label: string, status: number, json: unknown): GatewayError {
  const message = isObject(json) && typeof json.error === 'string' ? json.error : undefined;
  const code = errorCode(status, json) ?? -1;
  const reason =
    message !== undefined
      ? printable(message.slice(0, 256))
      : json === undefined
        ? `not an etcd gateway reply (HTTP ${status})`
        : `HTTP ${status}`;
  // Permission, credentials and malformed requests are not cured by waiting, nor a server that is
  // not etcd's gateway; a proxy's 5xx may be (and may hide a write: only etcd's own error did nothing).
  const permanent =
    [CODE.invalidArgument, CODE.permissionDenied, CODE.unauthenticated].includes(code as 3) ||
    (message === undefined && status < 500);
  return new GatewayError(
    { label, reason, permanent, reached: true, errorReply: message !== undefined },
    code === -1 ? undefined : code,
  );
}

/** A request that got no answer: refused, reset, timed out, or a TLS failure. */
function unreached(label: string, error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  // Answered, but past the bound: no retry makes it smaller. Its write may have been made (not an error reply).
  if (error instanceof ReplyTooLarge)
    return new GatewayError({ label, reason: error.message, permanent: true, reached: true, errorReply: false });
  const err = error as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = err.cause?.code ?? err.code;
  const reason =
    error instanceof TimeoutError
      ? `timed out after ${error.ms}ms`
      : code === 'ECONNREFUSED' || code === 'ConnectionRefused'
        ? 'connection refused'
        : code === 'ECONNRESET'
          ? 'connection reset'
          : printable(
              String(err.cause?.message ?? err.message ?? error)
                .split('\n')[0]!
                .slice(0, 256),
            );
  return new GatewayError({ label, reason, permanent: false, reached: false, errorReply: false });
}
