// One ioredis client per Redis instance (a server, a Sentinel-managed master, or a Cluster),
// set up so that nothing can hang: bounded connect, no offline queue, no command retried
// behind dlock's back.

import { UnavailableError } from '../errors.js';
import { TimeoutError, withTimeout } from '../timeout.js';
import { createClient, keepReconnecting, type RedisClient } from './create.js';
import { isCluster } from './nodes.js';
import { stopWatching, watchFailovers } from './sentinel-watch.js';
import type { RedisTarget } from './url.js';

export type { RedisClient } from './create.js';

export interface Instance {
  target: RedisTarget;
  client: RedisClient;
}

const UNTRUSTED = 'TLS certificate not trusted (unknown CA; give the CA that signed it with --tls-ca)';
const NOT_TLS = 'TLS handshake failed (is this a TLS port? use redis:// for plain text)';
/** What went wrong in a TLS handshake, by Node's error code (there is no fallback to plain text). */
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
  ERR_TLS_CERT_ALTNAME_INVALID: "TLS certificate does not match the host name (the URL's host must be in the certificate)",
  ERR_SSL_WRONG_VERSION_NUMBER: NOT_TLS,
  ERR_SSL_PACKET_LENGTH_TOO_LONG: NOT_TLS,
  ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED: 'the server requires a client certificate (--tls-cert and --tls-key)',
  ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE: 'the server rejected the client certificate',
  ERR_SSL_TLSV1_ALERT_UNKNOWN_CA: 'the server rejected the client certificate (unknown CA)',
};

/** A short reason for a connection or command failure, never containing a password. */
export function describeError(error: unknown): string {
  if (error instanceof TimeoutError) return error.message;
  const err = error as NodeJS.ErrnoException;
  if (err?.code && TLS_ERRORS[err.code]) return TLS_ERRORS[err.code];
  if (err?.code?.startsWith('ERR_SSL_') || err?.code === 'EPROTO') return `TLS handshake failed (${err.code})`;
  switch (err?.code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host not found';
    case 'ETIMEDOUT':
      return 'connect timed out';
    case 'ECONNRESET':
      return 'connection reset';
  }
  if ((error as Error)?.name === 'MaxRetriesPerRequestError') return 'connection closed';
  const message = String(err?.message ?? error).split('\n')[0];
  const sentinels = /^All sentinels are unreachable[^]*?(?:Last error: (.*))?$/.exec(message);
  if (sentinels) return describeSentinelFailure(sentinels[1] ?? '');
  if (/^(None of startup nodes is available|Failed to refresh slots cache)/.test(message)) {
    const last = (error as { lastNodeError?: unknown }).lastNodeError;
    const why = last ? describeError(last) : '';
    if (why.startsWith('not a cluster node')) return why;
    return why && !/^(Connection is closed|not connected)/.test(why) ? `no cluster node answered (${why})` : 'no cluster node answered';
  }
  if (/cluster support disabled/i.test(message)) return 'not a cluster node (cluster support disabled; use redis:// for a single server)';
  if (/WRONGPASS|NOAUTH|invalid password|invalid username-password/i.test(message)) return 'authentication failed';
  if (/^NOPERM/.test(message)) return `permission denied by the server's ACL: ${message.replace(/^NOPERM\s*/, '')}`;
  if (/can't run this command/.test(message)) return `permission denied by the server's ACL: ${message.replace(/^ERR\s*/, '')}`;
  if (/Stream isn't writeable|Connection is closed/.test(message)) return 'not connected';
  return message.replace(/^ReplyError: /, '');
}

/** Why no sentinel told us the master, from the last sentinel's error. */
function describeSentinelFailure(last: string): string {
  if (/No such master/i.test(last)) return 'no sentinel knows a master by that name';
  if (/WRONGPASS|NOAUTH|invalid password|invalid username-password|without any password/i.test(last)) {
    return "the sentinels refused the connection: authentication failed (their password is DLOCK_SENTINEL_PASSWORD; the URL's is the master's)";
  }
  return 'no sentinel answered';
}

/** Connect to one instance within `timeoutMs`; afterwards the client reconnects on its own. */
export async function connect(target: RedisTarget, timeoutMs: number): Promise<Instance> {
  const client = await createClient(target, timeoutMs);
  // Later failures surface through the commands that hit them; the first connect's error
  // (ECONNREFUSED, a TLS alert...) says more than ioredis' "Connection is closed", so keep it.
  let connectError: unknown;
  client.on('error', (error) => (connectError ??= error));
  try {
    // One PING proves the whole path (TLS both ways, AUTH) before any lock work, so a bad
    // certificate or password is reported as such and not as a failed command. ioredis only
    // reports a failed SELECT as an error event and goes on in db 0: that is an error too.
    await withTimeout(
      client.connect().then(() => client.ping()),
      timeoutMs,
    );
    if (connectError) throw connectError;
  } catch (error) {
    // A TLS client that times out before the handshake ends often talks to a plain-text port.
    const hint = target.tls && client.status === 'connecting' && error instanceof TimeoutError ? ' in the TLS handshake (is this a TLS port?)' : '';
    client.disconnect();
    throw new UnavailableError(`cannot reach ${target.label}: ${describeError(connectError ?? error)}${hint}`);
  }
  // From here on a dropped connection is retried quickly (a restarting Redis must not lose a
  // lease that is still valid); commands sent while it is down fail at once.
  keepReconnecting(client);
  if (target.kind === 'sentinel' && !isCluster(client)) await watchFailovers(client, target);
  return { target, client };
}

export function disconnectAll(instances: Instance[]): void {
  for (const { client } of instances) {
    client.disconnect();
    if (!isCluster(client)) stopWatching(client);
  }
}
