// The options of `dlock hold` and `dlock unhold`, checked (--reason: reason.ts).

import { UsageError } from '../errors.js';
import { refusal } from '../backend/index.js';
import { checkedReason } from './reason.js';
import { connectionConfig, type ConnectionConfig } from './connection.js';
import { lockOptions } from './lock.js';
import { MAX_DURATION_MS, MIN_TTL_MS, positiveDuration, validateKey, type Env, type RawOptions } from './options.js';
import type { AcquireConfig } from './commands.js';
import { toJson } from '../untrusted.js';

/** dlock hold: a holder with no process, from now (or its turn in line) until --for, --until or `dlock unhold`. */
export interface HoldCommandConfig extends Omit<AcquireConfig, 'reason'> {
  reason: string;
  /** No end: until `dlock unhold`. */
  forever: boolean;
  /** --until, as ms since the epoch; undefined for --for or no end. */
  untilMs: number | undefined;
}

/** The longest hold --for or --until may ask for (a hold meant to last longer has no end: until unhold). */
export const HOLD_MAX_MS = 366 * 86_400_000;

/** A hold's lease while it waits and until the script sets its end (forever: none is set; see enter.lua). */
const FOREVER_NOMINAL_MS = 3_600_000;

/** dlock hold <key> --reason <text> [--for D | --until T]: exclusive, no keeper, no command. */
export function holdConfig(
  key: string | undefined,
  raw: RawOptions,
  env: Env,
  at: Date = new Date(),
): HoldCommandConfig {
  const connection = connectionConfig(raw, env);
  if (!connection.caps.holds) throw new UsageError(`hold ${refusal(connection.caps, 'holds')}`);
  if (raw.reason === undefined)
    throw new UsageError("hold needs --reason <text>: why the key is held, as status shows it (e.g. 'release freeze')");
  const reason = checkedReason('--reason', raw.reason);
  if (raw.for !== undefined && raw.until !== undefined) throw new UsageError('--for and --until: choose one');
  let ttlMs = FOREVER_NOMINAL_MS;
  let untilMs: number | undefined;
  if (raw.for !== undefined) {
    ttlMs = positiveDuration('--for', raw.for);
    if (ttlMs < MIN_TTL_MS) throw new UsageError(`--for: must be at least ${MIN_TTL_MS}ms (got ${toJson(raw.for)})`);
    if (ttlMs > HOLD_MAX_MS) throw new UsageError(`--for: at most 366d; without --for the hold lasts until unhold`);
  } else if (raw.until !== undefined) {
    untilMs = untilTime(raw.until, at);
    ttlMs = untilMs - at.getTime();
  }
  if (typeof raw.wait === 'string' && !connection.caps.holdInLine) {
    throw new UsageError(`hold --wait ${refusal(connection.caps, 'holdInLine')}`);
  }
  // Without --wait a hold does not wait (busy at once): a freeze never queues by surprise; DLOCK_WAIT is not read.
  const lock = {
    ttl: `${ttlMs}ms`,
    wait: typeof raw.wait === 'string' ? raw.wait : false,
    conflictExitCode: raw.conflictExitCode,
  };
  const waitMs = lockOptions(lock, {}, connection.caps);
  // A wait for the turn never outlasts --until: a hold that would begin after its end is busy.
  const waited = untilMs === undefined ? waitMs.waitMs : Math.min(waitMs.waitMs ?? Infinity, ttlMs);
  return {
    ...connection,
    ...waitMs,
    waitMs: waited === Infinity ? undefined : waited,
    key: validateKey(key),
    watchPid: undefined,
    keeper: false,
    format: 'sh',
    monitor: undefined,
    holderCmd: HOLD_CMD,
    reason,
    forever: raw.for === undefined && raw.until === undefined,
    untilMs,
  };
}

/** The `cmd` a hold stores: no process runs it. */
export const HOLD_CMD = 'dlock hold';

/**
 * --until: an ISO 8601 date-time (2026-12-24T18:00, with seconds, Z or an offset; without a zone: local time), or
 * HH:MM (its next occurrence, local time). In the past, or more than 366 days ahead: 64.
 */
/** The date part names a day the month has (Date.parse rolls 2027-02-30 over to March 2). */
function realDate(text: string): boolean {
  const [year, month, day] = text.slice(0, 10).split('-').map(Number);
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

export function untilTime(text: string, at: Date): number {
  const clock = /^([01]?\d|2[0-3]):([0-5]\d)$/.exec(text);
  let ms: number;
  if (clock) {
    const next = new Date(at);
    next.setHours(Number(clock[1]), Number(clock[2]), 0, 0);
    if (next.getTime() <= at.getTime()) next.setDate(next.getDate() + 1);
    ms = next.getTime();
  } else if (/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:?\d{2})?$/.test(text)) {
    ms = Date.parse(text.replace(' ', 'T'));
    if (Number.isNaN(ms) || !realDate(text)) throw new UsageError(`--until: not a date-time (got ${toJson(text)})`);
  } else {
    throw new UsageError(
      `--until: not a time; use HH:MM (local, the next one) or an ISO 8601 date-time such as 2026-12-24T18:00 ` +
        `(got ${toJson(text)})`,
    );
  }
  if (ms - at.getTime() < MIN_TTL_MS) throw new UsageError(`--until: ${toJson(text)} is in the past`);
  if (ms - at.getTime() > Math.min(HOLD_MAX_MS, MAX_DURATION_MS))
    throw new UsageError(`--until: at most 366 days ahead; without --until the hold lasts until unhold`);
  return ms;
}

/** dlock unhold <key> [--force]. */
export interface UnholdConfig {
  config: ConnectionConfig;
  key: string;
  force: boolean;
}

export function unholdConfig(key: string | undefined, raw: RawOptions, env: Env): UnholdConfig {
  const config = connectionConfig(raw, env);
  if (!config.caps.holds) throw new UsageError(`unhold ${refusal(config.caps, 'holds')}`);
  return { config, key: validateKey(key), force: Boolean(raw.force) };
}
