// Each command's config: the options it takes, validated, with the rules between them.

import { holderCmd, NO_KEEPER_CMD } from '../holder-cmd.js';
import { badOption, UsageError } from '../errors.js';
import { connectionConfig, type ConnectionConfig } from './connection.js';
import { leaseTtl, lockOptions, type RunConfig } from './lock.js';
import { monitorConfig } from './monitor.js';
import { reasonOf } from './reason.js';
import {
  ACQUIRE_FORMATS,
  integer,
  oneOf,
  validateKey,
  type AcquireFormat,
  type Env,
  type RawOptions,
} from './options.js';
import { HISTORY_MAX, refusal, type Capabilities } from '../backend/index.js';

/**
 * dlock run: the lock options, the key and the command to run under it. Checked in that order: in
 * `run --once-per k -- true` the mistake is the duration "k", not a missing command after "true".
 * `command`: a function when reading it can itself fail (an option after the key).
 */
export function runConfig(
  key: string | undefined,
  command: string[] | (() => string[]),
  raw: RawOptions,
  env: Env,
  keyAfterDashes = false,
): RunConfig {
  const connection = connectionConfig(raw, env);
  const lock = lockOptions(raw, env, connection.caps);
  const reason = reasonField(reasonOf(raw, env, connection.caps));
  const monitor = monitorConfig(raw, env);
  const validKey = validateKey(key);
  const words = typeof command === 'function' ? command() : command;
  if (words.length === 0 || words[0] === '') throw noCommand(validKey, keyAfterDashes);
  return {
    ...connection,
    ...lock,
    key: validKey,
    command: words,
    monitor,
    holderCmd: raw.cmdMetadata === false ? '' : holderCmd(words, connection.secrets),
    ...reason,
  };
}

/**
 * No command after the key. When the key was the first word after `--` (`dlock run -n -- true`),
 * that word was most likely meant as the command: the example keeps it there, with <key> before.
 */
function noCommand(key: string, keyAfterDashes: boolean): UsageError {
  if (!keyAfterDashes)
    return new UsageError(`no command to run; write it after --, as in: dlock run ${key} -- ./job.sh`);
  return new UsageError(
    `no command to run: ${JSON.stringify(key)} was taken as the key (the first word after --); write the key ` +
      `before --, as in: dlock run <key> -- ${key}`,
  );
}

/** dlock acquire: run's lock options without a command, and who keeps the lock afterwards. */
export interface AcquireConfig extends Omit<RunConfig, 'command'> {
  /** --pid: the process whose exit releases the lock; undefined: dlock's caller (its parent). */
  watchPid: number | undefined;
  /** false with --no-keeper: nothing renews, the lease lasts --ttl unless `dlock renew` extends it. */
  keeper: boolean;
  /** stdout: POSIX-shell export lines, or one JSON object. */
  format: AcquireFormat;
}

/** dlock acquire: the lock options, the process to watch, and how to print the lock. */
export function acquireConfig(key: string | undefined, raw: RawOptions, env: Env): AcquireConfig {
  const connection = connectionConfig(raw, env);
  const keeper = raw.keeper !== false;
  const watchPid = raw.pid === undefined ? undefined : integer('--pid', raw.pid, 1, 2 ** 31 - 1);
  if (!keeper && watchPid !== undefined)
    throw new UsageError('--pid and --no-keeper: choose one (without a keeper nothing watches a process)');
  const lock = lockOptions(raw, env, connection.caps);
  if (!keeper) {
    const bound = raw.maxHold !== undefined ? '--max-hold' : raw.heartbeat !== undefined ? '--heartbeat' : undefined;
    if (bound) throw new UsageError(`${bound} and --no-keeper: choose one (without a keeper nothing stops the job)`);
    // DLOCK_MAX_HOLD / DLOCK_HEARTBEAT set for the runs and keepers of a job: nothing to enforce here.
    lock.maxHoldMs = lock.heartbeatMs = undefined;
  }
  if (!keeper && raw.ping !== undefined)
    throw new UsageError('--ping and --no-keeper: choose one (without a keeper nothing sees the section end)');
  // DLOCK_PING_URL set for every job does not refuse a --no-keeper acquire: it has no end to ping.
  const monitor = keeper ? monitorConfig(raw, env) : monitorConfig(raw, { ...env, DLOCK_PING_URL: undefined });
  const format = acquireFormat(raw);
  const reason = reasonField(reasonOf(raw, env, connection.caps));
  // eval of a busy acquire that exits 0 would let the script's next steps run without the lock.
  if (lock.conflictExitCode === 0 && format === 'sh') {
    const why = 'not 0 for eval: the steps after it would run without the lock; to skip quietly when busy, test for 75';
    throw badOption('--conflict-exit-code', raw.conflictExitCode, why);
  }
  // The key after the options: in `acquire -w k` the mistake is the --wait "k", not a missing key.
  const validKey = validateKey(key);
  return {
    ...connection,
    ...lock,
    key: validKey,
    watchPid,
    keeper,
    format,
    monitor,
    // status shows it as the holder's command (the keeper names the pid it watches).
    holderCmd: keeper ? 'dlock acquire' : NO_KEEPER_CMD,
    ...reason,
  };
}

/** `{ reason }`, or nothing without one. */
function reasonField(reason: string | undefined): { reason?: string } {
  return reason === undefined ? {} : { reason };
}

/** acquire's stdout: --json, or --format (its older spelling, kept for scripts that use it). */
function acquireFormat(raw: RawOptions): AcquireFormat {
  const format = oneOf('--format', raw.format ?? (raw.json ? 'json' : 'sh'), ACQUIRE_FORMATS);
  if (raw.json && format !== 'json') throw new UsageError(`--json and --format ${format}: choose one`);
  return format;
}

/** dlock status: a key (or none: every held lock) and the output form. */
export interface StatusConfig {
  config: ConnectionConfig;
  key: string | undefined;
  json: boolean;
}

/** dlock status [key]: the key is optional, and checked as every key is when given. */
export function statusConfig(key: string | undefined, raw: RawOptions, env: Env): StatusConfig {
  const config = connectionConfig(raw, env);
  const validKey = key === undefined ? undefined : validateKey(key);
  return { config, key: validKey, json: Boolean(raw.json) };
}

/** dlock history: the key, how many entries, and the output form. */
export interface HistoryConfig {
  config: ConnectionConfig;
  key: string;
  count: number;
  json: boolean;
}

/** dlock history needs a backend that keeps one; --count from 1 to the stream's cap. */
export function historyConfig(key: string | undefined, raw: RawOptions, env: Env): HistoryConfig {
  const config = connectionConfig(raw, env);
  const count = raw.count === undefined ? 20 : integer('--count', raw.count, 1, HISTORY_MAX);
  const can = config.caps;
  if (!can.history) throw new UsageError(`history ${refusal(can, 'history')}`);
  const validKey = validateKey(key);
  return { config, key: validKey, count, json: Boolean(raw.json) };
}

/** dlock doctor: the lease length the checks scale with, and the output form. */
export interface DoctorConfig {
  config: ConnectionConfig;
  ttlMs: number;
  json: boolean;
}

/** dlock doctor: a store its backend checks (caps.doctor); --ttl as run's (env DLOCK_TTL, at least the minimum). */
export function doctorConfig(raw: RawOptions, env: Env): DoctorConfig {
  const config = connectionConfig(raw, env);
  if (!config.caps.doctor) throw noDoctor(config.caps);
  return { config, ttlMs: leaseTtl(raw, env), json: Boolean(raw.json) };
}

/** The usage error for doctor on a store it has no checks for. */
export function noDoctor(can: Capabilities): UsageError {
  return new UsageError(`doctor ${refusal(can, 'doctor')}`);
}
