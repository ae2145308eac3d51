// etcd's v3 JSON gateway (POST /v3/…, base64 keys, int64 as strings, zero values left out), over
// the endpoints of one cluster: a request goes to the endpoint that answered last and fails over
// to the next when it cannot be reached; etcd's auth token is fetched when a user is given and
// fetched again when etcd says it expired. Replies are untrusted: every field a caller reads is
// checked where it is read (codec.ts), and an error reply becomes a failure in dlock's words.

import { now, TimeoutError } from '../../clock.js';
import type { MemberFailure } from '../../backend/failure.js';
import { printable } from '../../untrusted.js';
import type { EtcdConnection, Endpoint } from './connection.js';
import { int64, isObject, type Json } from './codec.js';
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

/** Paths whose reply etcd 3.4 sends without a header (`{}`: no alarms). */
const HEADERLESS = new Set(['/v3/maintenance/alarm']);

/** When the next endpoint is asked too: a quarter of the time left, within these bounds. */
const HEDGE_FLOOR_MS = 250;
const HEDGE_CAP_MS = 1_000;

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
   * POST `body` to `path` within `timeoutMs` across the endpoints; the reply's JSON object. The
   * endpoint that answered last goes first; when it has not answered within a share of the time
   * (HEDGE), the next is asked too, and the first of them to answer is taken: a frozen member costs
   * that share, a slow one nothing (every request dlock sends is idempotent, or said `once`).
   * Throws GatewayError: etcd's own refusal (with its code), or no endpoint answered in time.
   * `once`: one endpoint, one attempt (no resend, no second endpoint): a revoke whose answer was
   * lost must reach the caller as such, since a second revoke finds the lease gone.
   */
  call(path: string, body: Json, timeoutMs: number, { once = false } = {}): Promise<Record<string, unknown>> {
    const text = JSON.stringify(body);
    const deadline = now() + timeoutMs;
    const { endpoints } = this.connection;
    const order = endpoints.map((_, i) => (this.current + i) % endpoints.length).slice(0, once ? 1 : undefined);
    return new Promise((resolve, reject) => {
      let next = 0;
      let pending = 0;
      let settled = false;
      let last: GatewayError | undefined;
      let hedge: NodeJS.Timeout | undefined;
      const settle = (index: number | undefined, outcome: () => void) => {
        settled = true;
        clearTimeout(hedge);
        if (index !== undefined) this.current = index;
        outcome();
      };
      const launch = () => {
        if (settled || next >= order.length) return;
        const index = order[next++]!;
        pending++;
        clearTimeout(hedge);
        const left = deadline - now();
        if (next < order.length) hedge = setTimeout(launch, Math.max(HEDGE_FLOOR_MS, Math.min(HEDGE_CAP_MS, left / 4)));
        this.attempt(endpoints[index]!, path, text, deadline, once).then(
          (json) => !settled && settle(index, () => resolve(json)),
          (error: GatewayError) => {
            pending--;
            if (settled) return;
            // etcd's own refusal stands (it did nothing); anything else: the next endpoint, at once.
            if (error.failure.errorReply && !(error.code !== undefined && TRY_ANOTHER.has(error.code)))
              return settle(index, () => reject(error));
            last = error;
            if (next < order.length) launch();
            else if (pending === 0) settle(undefined, () => reject(last));
            if (this.current === index) this.rotateFrom(endpoints[index]!);
          },
        );
      };
      launch();
    });
  }

  /** One endpoint until `deadline`: the reply's JSON, once more after a new token or a reused connection reset. */
  private async attempt(
    endpoint: Endpoint,
    path: string,
    text: string,
    deadline: number,
    once: boolean,
  ): Promise<Record<string, unknown>> {
    let reauthenticated = false;
    let resent = once;
    for (;;) {
      const left = Math.max(1, Math.floor(deadline - now()));
      try {
        const headers = await this.headers(left);
        const reply = await this.transport.post(endpoint, path, text, headers, left);
        const json = parse(reply.body);
        const code = errorCode(reply.status, json);
        // A 200 without a header is no etcd's reply (etcd's carry one, a keepalive's in its result;
        // an alarm list with no alarm is `{}`).
        if (code === undefined && isObject(json) && (hasHeader(json) || HEADERLESS.has(path))) return json;
        if (code === undefined) throw notEtcd(endpoint.label, reply.status);
        if (code === CODE.unauthenticated && this.connection.user !== undefined && !reauthenticated) {
          // The token expired (--auth-token-ttl, 300 s idle by default): once more with a new one.
          reauthenticated = true;
          this.token = undefined;
          continue;
        }
        throw answered(endpoint.label, reply.status, json);
      } catch (error) {
        const failure = error instanceof GatewayError ? error : unreached(endpoint.label, error);
        // A kept-alive connection the member closed as it was reused: once more, on a new one.
        if (!resent && /^connection reset$|socket hang up/.test(failure.failure.reason)) {
          resent = true;
          continue;
        }
        throw failure;
      }
    }
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

/** Whether a reply carries etcd's response header (a keepalive's is inside its result). */
function hasHeader(json: Record<string, unknown>): boolean {
  const header = isObject(json.header) ? json.header : isObject(json.result) ? json.result.header : undefined;
  return isObject(header) && int64(header.revision) !== undefined;
}

/** A 200 reply that is not etcd's (another server, a proxy's page): the next endpoint, never taken for an answer. */
function notEtcd(label: string, status: number): GatewayError {
  const reason = `not an etcd gateway reply (HTTP ${status}, no response header)`;
  return new GatewayError({ label, reason, permanent: true, reached: true, errorReply: false });
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
