// What every command needs to reach the lock: the Redis URLs, passwords, TLS files and key prefix.

import { badOption, UsageError } from '../errors.js';
import { readTlsFiles, type TlsPaths } from '../backends/redis/client/tls.js';
import type { RedisTarget } from '../backends/redis/client/target.js';
import { parseRedisUrl, splitRedisUrls } from '../backends/redis/client/url.js';
import { capabilitiesOf, type Capabilities } from '../backend/capabilities.js';
import {
  DEFAULTS,
  LOG_FORMATS,
  oneOf,
  positiveDuration,
  type Env,
  type LogFormat,
  type RawOptions,
  type Verbosity,
} from './options.js';

/** What every command needs to reach the lock. */
export interface ConnectionConfig {
  targets: RedisTarget[];
  /** What the backend these targets make can do: options are refused from this, never by counting URLs. */
  capabilities: Capabilities;
  prefix: string;
  connectTimeoutMs: number;
  verbosity: Verbosity;
  logFormat: LogFormat;
}

/** --redis (else DLOCK_REDIS_URL), passwords, TLS, --prefix, timeouts, verbosity and log format. */
export function connectionConfig(raw: RawOptions, env: Env): ConnectionConfig {
  if (raw.quiet && raw.verbose) throw new UsageError('--quiet and --verbose: choose one');
  const fromEnv = env.DLOCK_REDIS_URL ? splitRedisUrls(env.DLOCK_REDIS_URL) : undefined;
  const urls = raw.redis?.length
    ? { list: raw.redis, option: '--redis' }
    : fromEnv?.length
      ? { list: fromEnv, option: 'DLOCK_REDIS_URL' }
      : { list: [DEFAULTS.redis], option: '--redis' };
  const prefix = raw.prefix ?? env.DLOCK_PREFIX ?? DEFAULTS.prefix;
  if (/[\s\p{C}\p{Z}{}]/u.test(prefix) || Buffer.byteLength(prefix) > 128) {
    throw badOption(
      raw.prefix !== undefined ? '--prefix' : 'DLOCK_PREFIX',
      prefix,
      'must be at most 128 bytes of printable text, without whitespace or braces',
    );
  }
  const logFormatOption = raw.logFormat !== undefined ? '--log-format' : 'DLOCK_LOG_FORMAT';
  const targets = redisTargets(urls.list, urls.option, raw, env);
  return {
    targets,
    capabilities: capabilitiesOf(targets.length),
    prefix,
    connectTimeoutMs: positiveDuration('--connect-timeout', raw.connectTimeout ?? DEFAULTS.connectTimeout),
    verbosity: raw.quiet ? 'quiet' : raw.verbose ? 'verbose' : 'normal',
    logFormat: oneOf(logFormatOption, raw.logFormat ?? env.DLOCK_LOG_FORMAT ?? DEFAULTS.logFormat, LOG_FORMATS),
  };
}

/**
 * The URLs parsed, with DLOCK_REDIS_PASSWORD where a URL has none, DLOCK_SENTINEL_PASSWORD
 * for the sentinels of a redis+sentinel:// URL, and the TLS files read.
 */
function redisTargets(urls: string[], option: string, raw: RawOptions, env: Env): RedisTarget[] {
  const targets = urls.map((url) => parseRedisUrl(url, option));
  const envPassword = env.DLOCK_REDIS_PASSWORD || undefined;
  const sentinelPassword = env.DLOCK_SENTINEL_PASSWORD || undefined;
  const paths: TlsPaths = {};
  for (const [name, flag, variable] of [
    ['ca', 'tlsCa', 'DLOCK_TLS_CA'],
    ['cert', 'tlsCert', 'DLOCK_TLS_CERT'],
    ['key', 'tlsKey', 'DLOCK_TLS_KEY'],
  ] as const) {
    const path = raw[flag] ?? (env[variable] || undefined);
    if (path !== undefined) paths[name] = { option: raw[flag] !== undefined ? `--tls-${name}` : variable, path };
  }
  const firstTls = paths.ca ?? paths.cert ?? paths.key;
  // TLS options never turn a redis:// URL into TLS, nor are they dropped silently.
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
