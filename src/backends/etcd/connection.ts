// The etcd backend's connection: the endpoints of one cluster (etcd://host:port[,host:port…] or
// etcds:// for TLS), the user and password for etcd's auth, and the TLS files. Light on purpose:
// config builds it on every command, before anything connects. Several endpoints are one cluster
// that agrees by itself (raft): a request fails over between them, never counts votes.

import type { Connection, ConnectionInput } from '../../backend/backend.js';
import type { Capabilities } from '../../backend/capabilities.js';
import { badOption } from '../../errors.js';
import { redactUrl } from '../../secrets.js';
import { readTlsFiles, tlsPathsOf, type TlsFiles } from '../../tls-files.js';

/** One endpoint of the cluster, as requests reach it and messages show it. */
export interface Endpoint {
  host: string;
  port: number;
  /** "etcd://127.0.0.1:2379": what messages show (never a password). */
  label: string;
}

export interface EtcdConnection extends Connection {
  store: 'etcd';
  endpoints: Endpoint[];
  tls: boolean;
  tlsFiles?: TlsFiles;
  /** etcd's auth (POST /v3/auth/authenticate): the user, and its password from the URL or DLOCK_ETCD_PASSWORD. */
  user?: string;
  password?: string;
}

/** etcd's client port. */
const DEFAULT_PORT = 2379;

/** Whether a URL names an etcd cluster (its scheme). */
export function isEtcdUrl(url: string): boolean {
  return /^\s*etcds?:\/\//i.test(url);
}

/** The connection but its --connect-timeout: every URL given is one cluster's endpoints. */
export function etcdConnection(input: ConnectionInput): Omit<EtcdConnection, 'connectTimeoutMs'> {
  const parsed = input.urls.map((url) => parseEtcdUrl(url, input.option));
  const tls = parsed[0]!.tls;
  const other = parsed.find((one) => one.tls !== tls);
  if (other) throw badOption(input.option, other.shown, 'etcd:// and etcds:// endpoints of one cluster: choose one');
  const user = parsed.find((one) => one.user !== undefined)?.user;
  const password =
    parsed.find((one) => one.password !== undefined)?.password ?? (input.env.DLOCK_ETCD_PASSWORD || undefined);
  if (password !== undefined && user === undefined) {
    throw badOption(input.option, parsed[0]!.shown, 'a password needs a user name (etcd://user:password@host:2379)');
  }
  const paths = tlsPathsOf(input.tls, input.env);
  const firstTls = paths.ca ?? paths.cert ?? paths.key;
  if (firstTls && !tls)
    throw badOption(firstTls.option, firstTls.path, `TLS options need etcds:// URLs, not ${parsed[0]!.shown}`);
  const endpoints = parsed.flatMap((one) => one.endpoints);
  const seen = new Set<string>();
  const unique = endpoints.filter(({ label }) => !seen.has(label) && seen.add(label));
  return {
    store: 'etcd',
    endpoints: unique,
    tls,
    ...(firstTls ? { tlsFiles: readTlsFiles(paths) } : {}),
    ...(user !== undefined ? { user } : {}),
    ...(password !== undefined ? { password } : {}),
    caps: etcdCapabilities(unique.length),
    prefix: input.prefix,
    secrets: password !== undefined ? [password] : [],
  };
}

interface ParsedUrl {
  endpoints: Endpoint[];
  tls: boolean;
  user?: string;
  password?: string;
  shown: string;
}

/** etcd://[user[:password]@]host[:port][,host[:port]…][/]: a usage error (64) saying what is wrong. */
function parseEtcdUrl(raw: string, option: string): ParsedUrl {
  const text = raw.trim();
  const shown = redactUrl(text);
  if (/[\p{C}\s]/u.test(text)) throw badOption(option, shown, 'the URL contains whitespace or control characters');
  const scheme = /^(etcds?):\/\//i.exec(text);
  if (!scheme) throw badOption(option, shown, 'expected an etcd:// or etcds:// URL');
  const tls = scheme[1]!.toLowerCase() === 'etcds';
  let rest = text.slice(scheme[0].length);
  if (/[?#]/.test(rest)) throw badOption(option, shown, 'query strings and fragments are not supported');
  const at = rest.lastIndexOf('@');
  let user: string | undefined;
  let password: string | undefined;
  if (at >= 0) {
    const auth = rest.slice(0, at);
    rest = rest.slice(at + 1);
    const colon = auth.indexOf(':');
    user = decode(option, shown, colon >= 0 ? auth.slice(0, colon) : auth, 'user name');
    if (colon >= 0) password = decode(option, shown, auth.slice(colon + 1), 'password');
    if (user === '') throw badOption(option, shown, 'the user name is empty');
  }
  if (rest.endsWith('/')) rest = rest.slice(0, -1);
  if (rest.includes('/')) throw badOption(option, shown, 'an etcd URL has no path (etcd://host:2379)');
  const name = tls ? 'etcds' : 'etcd';
  const endpoints = rest.split(',').map((entry) => endpointOf(entry, name, option, shown));
  return {
    endpoints,
    tls,
    ...(user !== undefined ? { user } : {}),
    ...(password !== undefined ? { password } : {}),
    shown,
  };
}

function endpointOf(entry: string, scheme: string, option: string, shown: string): Endpoint {
  if (entry === '')
    throw badOption(option, shown, 'the host list has an empty entry (hosts are separated by single commas)');
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(entry);
  if (!match) throw badOption(option, shown, `not a host[:port]: ${entry.slice(0, 64)}`);
  const port = match[2] === undefined ? DEFAULT_PORT : Number(match[2]);
  if (port < 1 || port > 65_535) throw badOption(option, shown, 'the port must be from 1 to 65535');
  const host = match[1]!.replace(/^\[(.*)\]$/, '$1');
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return { host, port, label: `${scheme}://${shownHost}:${port}` };
}

function decode(option: string, shown: string, part: string, what: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw badOption(option, shown, `the ${what} has a malformed %-escape`);
  }
}

/** What the lease's wait for an expired waiter's place is bounded by: its TTL, which is the hold's. */
function etcdCapabilities(endpoints: number): Capabilities {
  return {
    name: endpoints > 1 ? `an etcd cluster (${endpoints} endpoints)` : 'etcd',
    store: 'etcd',
    full: 'one Redis (a server, redis+sentinel:// or redis+cluster://)',
    members: { noun: 'etcd endpoints', field: 'etcd' },
    total: 1,
    quorum: 1,
    line: true,
    kinds: ['exclusive'],
    history: false,
    oncePer: false,
    priority: false,
    supersede: true,
    holds: true,
    holdInLine: false,
    syncReplicas: false,
    doctor: true,
    // A waiter watches its predecessor's key: a release is heard at once, a watch that ends is re-made.
    pollCapMs: WATCH_RENEW_MS,
    // A release deletes the key the next waiter watches: etcd tells it, nothing to deny.
    placeLeaseMs: undefined,
    refusals: ETCD_REFUSALS,
  };
}

/**
 * What etcd's mutex cannot be (docs/operations/etcd.md): one holder per key, whose details are not
 * kept after it; `etcdctl lock` users would not see the difference of a --shared or --slots lock.
 */
const ETCD_REFUSALS: Capabilities['refusals'] = {
  kinds:
    "is not built on etcd: etcd's mutex (the one etcdctl lock takes) has one holder per key; " +
    'use one Redis (a server, redis+sentinel:// or redis+cluster://) for --shared and --slots',
  oncePer: 'is not built on etcd: no done mark is kept there; use one Redis for --once-per',
  priority:
    "is not built on etcd: etcd's mutex serves waiters by their keys' create revisions, the order etcdctl lock " +
    'keeps too; use one Redis (a server, redis+sentinel:// or redis+cluster://) for --priority',
  history: "is not kept on etcd: a lock there has no history, its holder's key goes with its release",
  holdInLine:
    "is not built on etcd: a waiter's place there is its hold's own lease, which a hold that died while waiting " +
    'would keep for the whole hold; hold without --wait (busy when held), or use one Redis for a freeze that queues',
  syncReplicas: 'is not needed on etcd: every write is committed by a majority of the cluster before it answers',
};

/** A watch is re-made at least this often (Node's fetch drops an idle one at 300 s; a proxy may sooner). */
export const WATCH_RENEW_MS = 60_000;
