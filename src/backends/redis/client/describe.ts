// Every failure of the Redis client in dlock's own words: a short reason, never ioredis'
// wording ("Please report this", maxRetriesPerRequest, "Connection is closed."), never a
// password. The bundle is minified, so errors are told apart by code, message or instanceof
// of classes defined here, never by class name.

import { TimeoutError } from '../../../clock.js';
import { cut } from '../../../untrusted.js';

/**
 * The server answered, and its answer is final: a replica, not a Redis server, a key that
 * holds something dlock did not write... Its message is dlock's phrase, shown as is; such a
 * failure reads "<url>: <reason>" (not "cannot reach") and no wait retries it.
 */
export class AnsweredError extends Error {}

/**
 * The server's reply cannot be a true one: the wrong shape for what was asked, a fencing token
 * that is not a decimal integer, a reply too large or nested too deep to read. Nothing it said
 * is used; the instance counts as failed ("the instance failed: <reason>"), and no wait retries
 * it. `reason` is kept apart from `message`, which ioredis appends to for fatal errors.
 */
export class MalformedReplyError extends AnsweredError {
  constructor(readonly reason: string) {
    super(reason);
    malformedReasons.add(reason);
  }
}

/**
 * A reply the client refused to read at all (reply-guard.ts): too large, nested too deep, of the
 * wrong kind. The connection is closed with it (every command waiting on it gets this error) and
 * comes back on its own a moment later.
 */
export class UnreadReplyError extends MalformedReplyError {}

/** Every MalformedReplyError's reason: ioredis' Sentinel connector passes on only the text. */
const malformedReasons = new Set<string>();

/** A failure in dlock's words, and what it means for retrying and for how it is shown. */
export interface Described {
  reason: string;
  /**
   * No retry can change it (a permission, credentials, the wrong kind of server, a lying reply): a wait gives up at
   * once.
   */
  permanent: boolean;
  /** The reason is what a server that was reached answered or is: the error line leaves out "cannot reach". */
  reached: boolean;
}

/** A failure a retry may cure (a refused or dropped connection, a timeout, a server busy for now). */
const passing = (reason: string): Described => ({ reason, permanent: false, reached: false });
/** A failure no retry can cure, said by the server itself. */
const answered = (reason: string): Described => ({ reason, permanent: true, reached: true });
/** A failure no retry can cure (credentials, permissions), shown as "cannot reach". */
const refused = (reason: string): Described => ({ reason, permanent: true, reached: false });
/** Another reason around an inner failure: as final as the inner one, shown as "cannot reach". */
const around = (inner: Described, reason: string): Described => ({
  reason,
  permanent: inner.permanent,
  reached: false,
});

const UNTRUSTED = 'TLS certificate not trusted (unknown CA; give the CA that signed it with --tls-ca)';
const NOT_TLS = 'TLS handshake failed (is this a TLS port? use redis:// for plain text)';
/**
 * What went wrong in a TLS handshake, by the runtime's error code (there is no fallback to plain
 * text): OpenSSL's names under Node, BoringSSL's under Bun (the standalone executable).
 */
const TLS_ERRORS: Record<string, string> = {
  SELF_SIGNED_CERT_IN_CHAIN: UNTRUSTED,
  DEPTH_ZERO_SELF_SIGNED_CERT: UNTRUSTED,
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: UNTRUSTED,
  UNABLE_TO_GET_ISSUER_CERT: UNTRUSTED,
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: UNTRUSTED,
  CERT_SIGNATURE_FAILURE: 'TLS certificate not trusted (bad signature)',
  CERT_HAS_EXPIRED: 'TLS certificate has expired',
  CERT_NOT_YET_VALID: 'TLS certificate is not yet valid',
  CERT_REVOKED: 'TLS certificate was revoked',
  ERR_TLS_CERT_ALTNAME_INVALID:
    "TLS certificate does not match the host name (the URL's host must be in the certificate)",
  ERR_SSL_WRONG_VERSION_NUMBER: NOT_TLS,
  ERR_SSL_PACKET_LENGTH_TOO_LONG: NOT_TLS,
  ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED: 'the server requires a client certificate (--tls-cert and --tls-key)',
  ERR_SSL_TLSV1_ALERT_CERTIFICATE_REQUIRED: 'the server requires a client certificate (--tls-cert and --tls-key)',
  ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE: 'the server rejected the client certificate',
  ERR_SSL_TLSV1_ALERT_UNKNOWN_CA: 'the server rejected the client certificate (unknown CA)',
};

const NOT_CONNECTED = 'not connected';
/** ioredis' own messages (grep node_modules/ioredis/built), first match wins. */
const CLIENT_MESSAGES: [RegExp, string][] = [
  [/^Reached the max retries per request limit/, 'connection lost'],
  [/^Connection is closed\.?$/, NOT_CONNECTED],
  [/^Stream isn't writeable/, NOT_CONNECTED],
  [/^Cluster isn't ready/, 'the cluster is not connected'],
  [/^Cluster is (disconnected|disconnecting|ended)/, NOT_CONNECTED],
  [/^(Node is disconnected|No subscriber for the cluster|Connection is (discarded|aborted))/, NOT_CONNECTED],
  [/^Command aborted due to connection close/, 'connection lost before the reply'],
  [/^(Command timed out|Socket timeout|connect ETIMEDOUT)/, 'timed out'],
  [/^Command queue state error/, 'the server sent a reply nobody asked for (not a Redis server?)'],
];

/** A short reason for a connection or command failure, never containing a password. */
export function describeError(error: unknown): string {
  return describeFailure(error).reason;
}

/** The reason for a connection or command failure, and whether a retry can cure it. */
export function describeFailure(error: unknown): Described {
  if (error instanceof TimeoutError) return passing(error.message);
  if (error instanceof MalformedReplyError) return answered(`the instance failed: ${error.reason}`);
  if (error instanceof AnsweredError) return answered(error.message);
  const err = error as NodeJS.ErrnoException & { buffer?: unknown; lastNodeError?: unknown };
  if (err?.code && TLS_ERRORS[err.code]) return passing(TLS_ERRORS[err.code]);
  if (err?.code?.startsWith('ERR_SSL_') || err?.code === 'EPROTO') return passing(`TLS handshake failed (${err.code})`);
  switch (err?.code) {
    case 'ECONNREFUSED':
      return passing('connection refused');
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return passing('host not found');
    case 'ETIMEDOUT':
      return passing('connect timed out');
    case 'ECONNRESET':
      return passing('connection reset');
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return passing('no route to the host');
  }
  const message = String(err?.message ?? error).split('\n')[0];
  if (message.startsWith('Protocol error, got')) return answered(notRedis(err.buffer));
  const ready = /^Ready check failed: (.*)$/.exec(message);
  if (ready) return describeFailure(new Error(ready[1]));
  const sentinels = /^All sentinels are unreachable[^]*?(?:Last error: (.*))?$/.exec(message);
  if (sentinels) {
    const malformed = (sentinels[1] ?? '').replace(/\. Please report this\.$/, '');
    return malformedReasons.has(malformed)
      ? answered(`the instance failed: ${malformed}`)
      : describeSentinelFailure(sentinels[1] ?? '');
  }
  if (/^(None of startup nodes is available|Failed to refresh slots cache)/.test(message)) {
    const why = err.lastNodeError ? describeFailure(err.lastNodeError) : passing('');
    if (why.reason.startsWith('not a cluster node')) return why;
    if (err.lastNodeError instanceof MalformedReplyError) return answered(`no cluster node answered (${why.reason})`);
    return around(
      why,
      why.reason && why.reason !== NOT_CONNECTED
        ? `no cluster node answered (${why.reason})`
        : 'no cluster node answered',
    );
  }
  const redirections = /^Too many Cluster redirections\. Last error: (.*)$/.exec(message);
  if (redirections) {
    const last = describeFailure(new Error(redirections[1].replace(/^\w*Error: /, '')));
    return around(last, `too many cluster redirections (${last.reason})`);
  }
  for (const [pattern, reason] of CLIENT_MESSAGES) if (pattern.test(message)) return passing(reason);
  return describeReply(message);
}

/** A reply the server sent (-ERR ..., -WRONGPASS ...), without the script details Redis appends. */
function describeReply(message: string): Described {
  // The server's own text, of any size (escaped where it is printed).
  const reply = cut(message.replace(/^ReplyError: /, '')).replace(/\s*script: \w+, on @\w+:\d+\.?$/, '');
  if (/cluster support disabled/i.test(reply))
    return passing('not a cluster node (cluster support disabled; use redis:// for a single server)');
  if (/^NOAUTH/.test(reply))
    return answered(
      'the server needs a password: put it in the URL (redis://:PASSWORD@host:port) or in DLOCK_REDIS_PASSWORD',
    );
  if (/WRONGPASS|invalid password|invalid username-password/i.test(reply)) return refused('authentication failed');
  if (/^NOPERM/.test(reply))
    return refused(`permission denied by the server's ACL: ${reply.replace(/^NOPERM\s*/, '')}`);
  if (/can't run this command/.test(reply))
    return refused(`permission denied by the server's ACL: ${reply.replace(/^ERR\s*/, '')}`);
  if (/^READONLY/.test(reply)) return passing('the server is a read-only replica (READONLY)');
  if (/^LOADING/.test(reply)) return passing('the server is loading its data set (LOADING)');
  if (/^(MASTERDOWN|CLUSTERDOWN|TRYAGAIN|BUSY)\b/.test(reply)) return passing(`the server cannot serve now (${reply})`);
  if (/^OOM/.test(reply)) return passing(`the server is out of memory (${reply})`);
  // A reply no retry changes: a key of another type in our place, a command the server lacks.
  const final = FINAL_REPLY.test(reply);
  if (/^[A-Z]+\b/.test(reply)) return (final ? refused : passing)(`the server answered: ${reply}`);
  // Not a reply, and none of the client's messages above: say whose it is, one line.
  return (final ? refused : passing)(`Redis client error: ${reply}`);
}

/** Server replies that no retry changes, besides credentials and permissions (handled above). */
const FINAL_REPLY = /NOPERM|permission denied|authentication failed|WRONGTYPE|unknown command/i;

/** The first bytes of what a non-Redis server sent, made printable; ParserError keeps them as JSON. */
function notRedis(buffer: unknown): string {
  let bytes = Buffer.alloc(0);
  try {
    const parsed = JSON.parse(String(buffer)) as { data?: number[] };
    if (Array.isArray(parsed?.data)) bytes = Buffer.from(parsed.data);
  } catch {
    // nothing to show
  }
  if (bytes[0] === 0x15 || bytes[0] === 0x16) return 'a TLS port answered (use rediss:// for TLS)';
  const text = bytes.toString('latin1');
  if (text.startsWith('HTTP/')) return 'not a Redis server: it answered HTTP (check the host and port)';
  const first = text
    .split(/\r?\n/)[0]
    .slice(0, 32)
    .replace(/[^\x20-\x7e]|"/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
  return `not a Redis server: it answered "${first}" (check the host and port)`;
}

/** Why no sentinel told us the master, from the last sentinel's error. */
function describeSentinelFailure(last: string): Described {
  if (/No such master/i.test(last)) return passing('no sentinel knows a master by that name');
  if (/WRONGPASS|NOAUTH|invalid password|invalid username-password|without any password/i.test(last)) {
    return refused(
      'the sentinels refused the connection: authentication failed (their password is DLOCK_SENTINEL_PASSWORD; the ' +
        "URL's is the master's)",
    );
  }
  if (/unknown command .sentinel/i.test(last)) {
    return answered(
      'a Redis server answered, not a sentinel (sentinels usually listen on 26379; for one server use ' +
        'redis://host:port)',
    );
  }
  return passing('no sentinel answered');
}

/**
 * Whether a failed command got an error reply from the server (-ERR, -NOPERM, ...), as opposed
 * to no reply at all (a timeout, a dropped connection): only then is it known what it did.
 */
export function isErrorReply(error: unknown): boolean {
  if (error instanceof AnsweredError) return true;
  if (error instanceof TimeoutError || (error as NodeJS.ErrnoException)?.code) return false;
  return /^(ReplyError: )?[A-Z][A-Z_]+\b/.test(String((error as Error)?.message ?? ''));
}
