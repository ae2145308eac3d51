// Raw options as commander hands them over, the defaults, and the parsers every config shares.

import { parseDuration } from '../duration.js';
import { badOption, UsageError } from '../errors.js';
import type { HolderKind } from '../backend/index.js';

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
/**
 * Longest duration any option takes: 36500d (about 100 years), so that any deadline computed from
 * one is still a date. Timers past Node's 2^31−1 ms are split (longTimeout in src/clock.ts).
 */
export const MAX_DURATION_MS = 36_500 * 86_400_000;
export const ON_LOST = ['term', 'kill', 'ignore'] as const;
export const LOG_FORMATS = ['text', 'json'] as const;
export const ACQUIRE_FORMATS = ['sh', 'json'] as const;

export type OnLost = (typeof ON_LOST)[number];
export type LogFormat = (typeof LOG_FORMATS)[number];
export type AcquireFormat = (typeof ACQUIRE_FORMATS)[number];
export type Verbosity = 'quiet' | 'normal' | 'verbose';
export type Env = Record<string, string | undefined>;

/**
 * Options as commander hands them over: raw strings, before any validation. Each holder kind's
 * option is its kind (MODES): --slots n a string, --shared and -x, -e, --exclusive (flock's
 * spelling of the default) true.
 */
export interface RawOptions extends Partial<Record<HolderKind, string | boolean>> {
  redis?: string[];
  ttl?: string;
  wait?: string | boolean;
  conflictExitCode?: string;
  onLost?: string;
  killAfter?: string;
  /** --signal: the stop signal for a lost lock (--on-lost term) and the bounds. */
  signal?: string;
  /** --ping-output (run): the size of the output's tail sent as the final ping's body. */
  pingOutput?: string;
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
  pid?: string;
  /** false with --no-keeper. */
  keeper?: boolean;
  format?: string;
  /** --json: print JSON (acquire: the same as --format json). */
  json?: boolean;
  token?: string;
  oncePer?: string;
  /** run and acquire: --priority, --supersede. */
  priority?: string;
  supersede?: boolean;
  maxHold?: string;
  heartbeat?: string;
  /** release: --force, --now, --slot, --exit-status. */
  force?: boolean;
  now?: boolean;
  slot?: string;
  exitStatus?: string;
  /** history --count. */
  count?: string;
  /** run and acquire: --ping, --ping-busy, --ping-timeout, --on-event. */
  ping?: string;
  pingBusy?: boolean;
  pingTimeout?: string;
  onEvent?: string;
  /** metrics: --textfile, --push, --listen, --only; serve: --listen. */
  textfile?: string;
  only?: boolean;
  push?: string;
  listen?: string;
  /** run, acquire, hold: --reason; hold: --for, --until. */
  reason?: string;
  for?: string;
  until?: string;
}

export function duration(option: string, value: string): number {
  const ms = parseDuration(value);
  if (ms === undefined) {
    const trimmed = value.trim();
    if (trimmed !== value && parseDuration(trimmed) !== undefined)
      throw badOption(option, value, `not a duration; without the spaces: ${trimmed}`);
    throw badOption(option, value, 'not a duration; use e.g. 250ms, 30s, 5m, 1h30m, 1d or a number of seconds');
  }
  if (ms > MAX_DURATION_MS) throw badOption(option, value, 'must be at most 36500d (about 100 years)');
  return ms;
}

/** A duration that must be more than zero. */
export function positiveDuration(option: string, value: string): number {
  const ms = duration(option, value);
  if (ms <= 0) throw badOption(option, value, 'must be greater than zero');
  return ms;
}

/** A decimal integer from min to max. */
export function integer(option: string, value: string, min: number, max: number): number {
  if (!/^\d+$/.test(value.trim()) || Number(value) < min || Number(value) > max) {
    throw badOption(option, value, `expected an integer from ${min} to ${max}`);
  }
  return Number(value);
}

/** One of a fixed list of words. */
export function oneOf<T extends string>(option: string, value: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value)) {
    throw badOption(option, value, `expected one of ${allowed.join(', ')}`);
  }
  return value as T;
}

/** Keys: 1-256 bytes of printable UTF-8, no whitespace, no braces (they would break the hash tag). */
export function validateKey(key: string | undefined): string {
  // Commander's own words, which the key's check replaces (after the options: src/cli/options.ts, keyAfterOptions).
  if (key === undefined) throw new UsageError("missing required argument 'key'");
  if (key === '') throw new UsageError('a lock key is required');
  const bytes = Buffer.byteLength(key, 'utf8');
  if (bytes > MAX_KEY_BYTES)
    throw badOption('key', key.slice(0, 40) + '...', `longer than ${MAX_KEY_BYTES} bytes (${bytes})`);
  if (/[\s\p{C}\p{Z}]/u.test(key))
    throw badOption('key', key, 'must be printable, without whitespace or control characters');
  if (/[{}]/.test(key)) throw badOption('key', key, 'must not contain { or }');
  return key;
}
