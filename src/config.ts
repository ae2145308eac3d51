// Defaults, environment variables and validation: everything between argv and a command.

import { parseDuration } from './duration.js';
import { holderCmd } from './holder-cmd.js';
import { badOption, UsageError } from './errors.js';
import { readTlsFiles, type TlsPaths } from './redis/tls.js';
import type { RedisTarget } from './redis/target.js';
import { MAX_SLOTS } from './lock/holder.js';
import type { HoldMode } from './lock/line.js';
import { HISTORY_MAX } from './lock/limits.js';
import { parseRedisUrl, splitRedisUrls } from './redis/url.js';
import { capabilitiesOf, ONE_REDIS, type Capabilities } from './lockset/capabilities.js';

export const DEFAULTS = {
  redis: 'redis://127.0.0.1:6379',
  ttl: '30s',
  conflictExitCode: 75,
  onLost: 'term',
  killAfter: '10s',
  connectTimeout: '5s',
  prefix: 'dlock:',
  logFormat: 'text',
} as const;

export const MIN_TTL_MS = 100;
export const MAX_KEY_BYTES = 256;
/** Longest duration any option takes (24 days): longer ones would overflow Node's timers. */
export const MAX_DURATION_MS = 576 * 3_600_000;
export const ON_LOST = ['term', 'kill', 'ignore'] as const;
export const LOG_FORMATS = ['text', 'json'] as const;
export const ACQUIRE_FORMATS = ['sh', 'json'] as const;

export type OnLost = (typeof ON_LOST)[number];
export type LogFormat = (typeof LOG_FORMATS)[number];
export type AcquireFormat = (typeof ACQUIRE_FORMATS)[number];
export type Verbosity = 'quiet' | 'normal' | 'verbose';
export type Env = Record<string, string | undefined>;

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

export interface RunConfig extends ConnectionConfig {
  key: string;
  command: string[];
  ttlMs: number;
  /** undefined: wait forever; 0: --no-wait. */
  waitMs: number | undefined;
  conflictExitCode: number;
  onLost: OnLost;
  killAfterMs: number;
  syncReplicas: number;
  /** The holder metadata's `cmd`: the command line, truncated, passwords masked; '' with --no-cmd-metadata. */
  holderCmd: string;
  /** Alone (default), --shared, or --slots n (n > 1). */
  mode: HoldMode;
  /** --slots was given (even --slots 1): the command gets DLOCK_SLOT. */
  slotted: boolean;
  /** --once-per window in ms (0: none): after an exit 0 the key is done until that run's start + this. */
  oncePerMs: number;
}

/** dlock acquire: run's lock options without a command, and who keeps the lock afterwards. */
export interface AcquireConfig extends Omit<RunConfig, 'command' | 'oncePerMs'> {
  /** --pid: the process whose exit releases the lock; undefined: dlock's caller (its parent). */
  watchPid: number | undefined;
  /** false with --no-keeper: nothing renews, the lease lasts --ttl unless `dlock renew` extends it. */
  keeper: boolean;
  /** stdout: POSIX-shell export lines, or one JSON object. */
  format: AcquireFormat;
}

/** Options as commander hands them over: raw strings, before any validation. */
export interface RawOptions {
  redis?: string[];
  ttl?: string;
  wait?: string | boolean;
  conflictExitCode?: string;
  onLost?: string;
  killAfter?: string;
  connectTimeout?: string;
  prefix?: string;
  syncReplicas?: string;
  quiet?: boolean;
  verbose?: boolean;
  logFormat?: string;
  tlsCa?: string;
  tlsCert?: string;
  tlsKey?: string;
  /** false with --no-cmd-metadata. */
  cmdMetadata?: boolean;
  slots?: string;
  shared?: boolean;
  /** -x, -e, --exclusive: flock's spelling of the default. */
  exclusive?: boolean;
  pid?: string;
  /** false with --no-keeper. */
  keeper?: boolean;
  format?: string;
  /** acquire --json: the same as --format json. */
  json?: boolean;
  token?: string;
  oncePer?: string;
}

export function duration(option: string, value: string): number {
  const ms = parseDuration(value);
  if (ms === undefined) {
    throw badOption(option, value, 'not a duration; use e.g. 250ms, 30s, 5m, 1h, 1d or a number of seconds');
  }
  if (ms > MAX_DURATION_MS) throw badOption(option, value, 'must be at most 576h (24 days)');
  return ms;
}

function positiveDuration(option: string, value: string): number {
  const ms = duration(option, value);
  if (ms <= 0) throw badOption(option, value, 'must be greater than zero');
  return ms;
}

function integer(option: string, value: string, min: number, max: number): number {
  if (!/^\d+$/.test(value.trim()) || Number(value) < min || Number(value) > max) {
    throw badOption(option, value, `expected an integer from ${min} to ${max}`);
  }
  return Number(value);
}

function oneOf<T extends string>(option: string, value: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value)) {
    throw badOption(option, value, `expected one of ${allowed.join(', ')}`);
  }
  return value as T;
}

/** Keys: 1-256 bytes of printable UTF-8, no whitespace, no braces (they would break the hash tag). */
export function validateKey(key: string | undefined): string {
  if (key === undefined || key === '') throw new UsageError('a lock key is required');
  const bytes = Buffer.byteLength(key, 'utf8');
  if (bytes > MAX_KEY_BYTES)
    throw badOption('key', key.slice(0, 40) + '...', `longer than ${MAX_KEY_BYTES} bytes (${bytes})`);
  if (/[\s\p{C}\p{Z}]/u.test(key))
    throw badOption('key', key, 'must be printable, without whitespace or control characters');
  if (/[{}]/.test(key)) throw badOption('key', key, 'must not contain { or }');
  return key;
}

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

/** --ttl, else DLOCK_TTL, else the default: at least MIN_TTL_MS. */
export function leaseTtl(raw: RawOptions, env: Env): number {
  const ttlOption = raw.ttl !== undefined ? '--ttl' : 'DLOCK_TTL';
  const ttlText = raw.ttl ?? env.DLOCK_TTL ?? DEFAULTS.ttl;
  const ttlMs = duration(ttlOption, ttlText);
  if (ttlMs < MIN_TTL_MS) throw badOption(ttlOption, ttlText, `must be at least ${MIN_TTL_MS}ms`);
  return ttlMs;
}

export function runConfig(key: string | undefined, command: string[], raw: RawOptions, env: Env): RunConfig {
  const connection = connectionConfig(raw, env);
  const validKey = validateKey(key);
  if (command.length === 0 || command[0] === '') {
    throw new UsageError(`no command to run; write it after --, as in: dlock run ${validKey} -- ./job.sh`);
  }
  return {
    ...connection,
    ...lockOptions(raw, env, connection.capabilities),
    key: validKey,
    command,
    oncePerMs: oncePer(raw.oncePer, connection.capabilities),
    holderCmd:
      raw.cmdMetadata === false
        ? ''
        : holderCmd(
            command,
            connection.targets.flatMap(({ password, sentinelPassword }) => [password ?? '', sentinelPassword ?? '']),
          ),
  };
}

export function acquireConfig(key: string | undefined, raw: RawOptions, env: Env): AcquireConfig {
  const connection = connectionConfig(raw, env);
  const validKey = validateKey(key);
  const keeper = raw.keeper !== false;
  const watchPid = raw.pid === undefined ? undefined : integer('--pid', raw.pid, 1, 2 ** 31 - 1);
  if (!keeper && watchPid !== undefined)
    throw new UsageError('--pid and --no-keeper: choose one (without a keeper nothing watches a process)');
  const lock = lockOptions(raw, env, connection.capabilities);
  const format = acquireFormat(raw);
  // eval of a busy acquire that exits 0 would let the script's next steps run without the lock.
  if (lock.conflictExitCode === 0 && format === 'sh') {
    const why = 'not 0 for eval: the steps after it would run without the lock; to skip quietly when busy, test for 75';
    throw badOption('--conflict-exit-code', raw.conflictExitCode, why);
  }
  return {
    ...connection,
    ...lock,
    key: validKey,
    watchPid,
    keeper,
    format,
    // status shows it as the holder's command (the keeper names the pid it watches).
    holderCmd: keeper ? 'dlock acquire' : 'dlock acquire --no-keeper',
  };
}

/** acquire's stdout: --json, or --format (its older spelling, kept for scripts that use it). */
function acquireFormat(raw: RawOptions): AcquireFormat {
  const format = oneOf('--format', raw.format ?? (raw.json ? 'json' : 'sh'), ACQUIRE_FORMATS);
  if (raw.json && format !== 'json') throw new UsageError(`--json and --format ${format}: choose one`);
  return format;
}

/** An owner token as dlock hands them out (128 bits, hex). */
export function validateToken(option: string, token: string): string {
  if (!/^[0-9a-f]{32}$/.test(token))
    throw badOption(
      option,
      token.length > 40 ? `${token.slice(0, 40)}...` : token,
      'not an owner token (32 hex digits, as DLOCK_TOKEN holds)',
    );
  return token;
}

/**
 * The owner token of renew and release: --token, else DLOCK_TOKEN when DLOCK_KEY names this key
 * (the variables `dlock acquire` exports); undefined when neither gives one.
 */
export function ownerToken(key: string, raw: RawOptions, env: Env): string | undefined {
  if (raw.token !== undefined) return validateToken('--token', raw.token);
  if (env.DLOCK_KEY === key && env.DLOCK_TOKEN) return validateToken('DLOCK_TOKEN', env.DLOCK_TOKEN);
  return undefined;
}

/** The lock options run and acquire share: lease, wait, conflict code, loss, replicas. */
function lockOptions(
  raw: RawOptions,
  env: Env,
  can: Capabilities,
): Pick<
  RunConfig,
  'ttlMs' | 'waitMs' | 'conflictExitCode' | 'onLost' | 'killAfterMs' | 'syncReplicas' | 'mode' | 'slotted'
> {
  const ttlMs = leaseTtl(raw, env);

  let waitMs: number | undefined;
  if (raw.wait === false) {
    waitMs = 0;
  } else if (typeof raw.wait === 'string') {
    waitMs = duration('--wait', raw.wait);
  } else if (env.DLOCK_WAIT !== undefined && env.DLOCK_WAIT !== '') {
    waitMs = duration('DLOCK_WAIT', env.DLOCK_WAIT);
  }

  const killAfterMs = duration('--kill-after', raw.killAfter ?? DEFAULTS.killAfter);
  const mode = holdMode(raw, can);
  return {
    ttlMs,
    waitMs,
    conflictExitCode: integer(
      '--conflict-exit-code',
      raw.conflictExitCode ?? String(DEFAULTS.conflictExitCode),
      0,
      255,
    ),
    onLost: oneOf('--on-lost', raw.onLost ?? DEFAULTS.onLost, ON_LOST),
    // The grace must fit inside the lease, or a lost lock would outlive its expiry.
    killAfterMs: Math.min(killAfterMs, Math.floor(ttlMs / 3)),
    syncReplicas: integer('--sync-replicas', raw.syncReplicas ?? '0', 0, 1_000),
    mode,
    slotted: raw.slots !== undefined,
  };
}

/**
 * --shared, --slots n, or alone. Both need one instance (a server, Sentinel or Cluster): a
 * Redlock majority cannot bound how many hold at once (n holders on each of 3 instances can
 * make 3n/2 majorities), and it has no line to keep shared and exclusive holders fair.
 */
export function holdMode(raw: Pick<RawOptions, 'slots' | 'shared' | 'exclusive'>, can: Capabilities): HoldMode {
  const slots = raw.slots === undefined ? 1 : integer('--slots', raw.slots, 1, MAX_SLOTS);
  if (raw.shared && raw.slots !== undefined)
    throw new UsageError('--shared and --slots: choose one (--shared holders have no slots)');
  if (raw.exclusive && raw.shared) throw new UsageError('--exclusive and --shared: choose one');
  if (raw.exclusive && slots > 1) {
    throw new UsageError(`--exclusive and --slots ${slots}: choose one (--slots lets ${slots} hold at once)`);
  }
  const mode: HoldMode = raw.shared ? { kind: 'shared' } : slots > 1 ? { kind: 'slots', slots } : { kind: 'exclusive' };
  if ((mode.kind === 'shared' && !can.shared) || (mode.kind === 'slots' && !can.slots)) {
    throw new UsageError(
      `${raw.shared ? '--shared' : '--slots'} needs ${ONE_REDIS}, not ${can.name}: ` +
        "a majority of each instance's holders cannot bound how many hold at once",
    );
  }
  return mode;
}

/**
 * --once-per: a window of at least the TTL's minimum, on one instance only: with Redlock the
 * done mark would be one more value a quorum must agree on, and a release that reached only
 * some instances would leave it on a minority (the job then runs twice, or never).
 */
export function oncePer(value: string | undefined, can: Capabilities): number {
  if (value === undefined) return 0;
  const ms = positiveDuration('--once-per', value);
  if (ms < MIN_TTL_MS) throw badOption('--once-per', value, `must be at least ${MIN_TTL_MS}ms`);
  if (!can.oncePer) {
    throw new UsageError(
      `--once-per needs ${ONE_REDIS}, not ${can.name}: ` +
        'the done mark is written by the release, which may reach only some instances',
    );
  }
  return ms;
}

/** dlock history needs a backend that keeps one. */
export function historyConfig(config: ConnectionConfig): void {
  const can = config.capabilities;
  if (!can.history) throw new UsageError(`history needs ${ONE_REDIS}: with ${can.name}: no history is kept`);
}

/** history -n: how many entries (1 … the stream's cap). */
export function historyCount(value: string | undefined): number {
  return value === undefined ? 20 : integer('--count', value, 1, HISTORY_MAX);
}

/** release --force --slot: a slot number of a --slots lock. */
export function slotNumber(value: string): number {
  return integer('--slot', value, 0, MAX_SLOTS - 1);
}
