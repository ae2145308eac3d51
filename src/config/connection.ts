// What every command needs to reach the lock: the store's URLs (its backend builds the connection), the key
// prefix, and how to speak.

import { badOption, UsageError } from '../errors.js';
import { connectionOf, splitStoreUrls, type Connection } from '../backend/index.js';
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

/** What every command needs to reach the lock: the store's connection, and how to speak. */
export type ConnectionConfig = Connection & {
  verbosity: Verbosity;
  logFormat: LogFormat;
};

export function connectionConfig(raw: RawOptions, env: Env): ConnectionConfig {
  if (raw.quiet && raw.verbose) throw new UsageError('--quiet and --verbose: choose one');
  const fromEnv = env.DLOCK_REDIS_URL ? splitStoreUrls(env.DLOCK_REDIS_URL) : undefined;
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
  const connection = connectionOf({
    urls: urls.list,
    option: urls.option,
    prefix,
    tls: { ca: raw.tlsCa, cert: raw.tlsCert, key: raw.tlsKey },
    env,
  });
  return {
    ...connection,
    connectTimeoutMs: positiveDuration('--connect-timeout', raw.connectTimeout ?? DEFAULTS.connectTimeout),
    verbosity: raw.quiet ? 'quiet' : raw.verbose ? 'verbose' : 'normal',
    logFormat: oneOf(logFormatOption, raw.logFormat ?? env.DLOCK_LOG_FORMAT ?? DEFAULTS.logFormat, LOG_FORMATS),
  };
}
