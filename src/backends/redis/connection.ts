// The Redis backend's connection: its targets (a server, Sentinel, Cluster; several make a
// Redlock quorum), their passwords and TLS files, built from the URLs and the options config/
// gathered. Light on purpose: config builds it on every command, before anything connects.

import { badOption } from '../../errors.js';
import type { Connection, ConnectionInput } from '../../backend/backend.js';
import type { Capabilities } from '../../backend/capabilities.js';
import { KINDS } from '../../backend/mode.js';
import { readTlsFiles, tlsPathsOf } from '../../tls-files.js';
import type { RedisTarget } from './client/target.js';
import { parseRedisUrl, splitRedisUrls } from './client/url.js';
import { quorumSize } from './quorum.js';
import { PLACE_LEASE_MS, POLL_CAP_MS } from './lock/limits.js';

/** A Redis connection: what every backend's has, and the targets only this backend reads. */
export interface RedisConnection extends Connection {
  store: 'redis';
  targets: RedisTarget[];
}

/** DLOCK_REDIS_URL's URLs (split on commas and whitespace). */
export const splitUrls = splitRedisUrls;

/** The connection but its --connect-timeout (config reads that option after the URLs, for the order of errors). */
export function redisConnection(input: ConnectionInput): Omit<RedisConnection, 'connectTimeoutMs'> {
  const targets = redisTargets(input);
  return {
    store: 'redis',
    targets,
    caps: redisCapabilities(targets.length),
    prefix: input.prefix,
    secrets: targets.flatMap(({ password, sentinelPassword }) => [password ?? '', sentinelPassword ?? '']),
  };
}

const FULL = 'one Redis (a server, redis+sentinel:// or redis+cluster://)';
const MEMBERS = { noun: 'Redis instances', field: 'redis' };
const NOTIFY_DENIED = 'PUBLISH denied: grant +publish';

/** The statement for `instances` configured targets (1: one Redis; more: a Redlock quorum). */
function redisCapabilities(instances: number): Capabilities {
  const common = { store: 'Redis', full: FULL, members: MEMBERS, total: Math.max(1, instances) };
  const polling = { pollCapMs: POLL_CAP_MS, notifyDenied: NOTIFY_DENIED, doctor: true, syncReplicas: true };
  if (instances <= 1) {
    const all = {
      line: true,
      kinds: KINDS,
      history: true,
      oncePer: true,
      priority: true,
      supersede: true,
      holds: true,
      holdInLine: true,
    };
    return { name: 'one Redis', ...common, quorum: 1, ...all, ...polling, placeLeaseMs: PLACE_LEASE_MS, refusals: {} };
  }
  const none = {
    line: false,
    kinds: ['exclusive'] as const,
    history: false,
    oncePer: false,
    priority: false,
    supersede: false,
    holds: false,
    holdInLine: false,
  };
  const name = `a Redlock quorum of ${instances}`;
  const refusals = redlockRefusals(name);
  return { name, ...common, quorum: quorumSize(instances), ...none, ...polling, placeLeaseMs: undefined, refusals };
}

/**
 * Why a Redlock quorum has no --shared/--slots, --once-per, history, --priority or --supersede (no line at all):
 * a majority cannot bound how many hold at once (n holders on each of 3 instances can make 3n/2 majorities)
 * nor keep shared and exclusive holders fair without a line; the done mark would be one more value a quorum
 * must agree on, and a release that reached only some instances would leave it on a minority (the job then
 * runs twice, or never).
 */
function redlockRefusals(name: string): Capabilities['refusals'] {
  return {
    kinds: `needs ${FULL}, not ${name}: a majority of each instance's holders cannot bound how many hold at once`,
    oncePer: `needs ${FULL}, not ${name}: the done mark is written by the release, which may reach only some instances`,
    history: `needs ${FULL}: with ${name}: no history is kept`,
    priority: `needs ${FULL}, not ${name}: a Redlock quorum has no line, its waiters race each other`,
    supersede: `needs a store with a line (${FULL}, or etcd), not ${name}: a Redlock quorum has no line`,
    holds:
      `needs ${FULL}, not ${name}: a hold and its reason are recorded in the key's history and read back by ` +
      'status from one store; a quorum keeps no history, and its instances may disagree on the holder',
  };
}

function redisTargets({ urls, option, tls, env }: ConnectionInput): RedisTarget[] {
  const targets = urls.map((url) => parseRedisUrl(url, option));
  const envPassword = env.DLOCK_REDIS_PASSWORD || undefined;
  const sentinelPassword = env.DLOCK_SENTINEL_PASSWORD || undefined;
  const paths = tlsPathsOf(tls, env);
  const firstTls = paths.ca ?? paths.cert ?? paths.key;
  const plain = targets.find((target) => !target.tls);
  if (firstTls && plain)
    throw badOption(
      firstTls.option,
      firstTls.path,
      `TLS options need rediss:// URLs, but ${option} has ${plain.label}`,
    );
  const tlsFiles = firstTls ? readTlsFiles(paths) : undefined;
  return targets.map((target) => ({
    ...target,
    password: target.password ?? envPassword,
    ...(target.kind === 'sentinel' && sentinelPassword ? { sentinelPassword } : {}),
    ...(tlsFiles ? { tlsFiles } : {}),
  }));
}
