// The owner token renew and release take, and the rules of release --force.

import { badOption, UsageError } from '../errors.js';
import { connectionConfig, type ConnectionConfig } from './connection.js';
import { heldLocks, nestedTokens } from './enclosing.js';
import { integer, validateKey, type Env, type RawOptions } from './options.js';
import { MAX_SLOTS } from '../backend/index.js';

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
 * The owner token of renew and release: --token, else DLOCK_TOKEN when DLOCK_KEY names this key,
 * else this key's entry in DLOCK_HELD (the variables `dlock acquire` exports: each section of a
 * script releases its own key); undefined when none gives one.
 */
export function ownerToken(key: string, raw: RawOptions, env: Env): string | undefined {
  if (raw.token !== undefined) return validateToken('--token', raw.token);
  if (env.DLOCK_KEY === key && env.DLOCK_TOKEN) return validateToken('DLOCK_TOKEN', env.DLOCK_TOKEN);
  return heldLocks(env).find((lock) => lock.key === key)?.token;
}

/** Where the owner token comes from, as the usage errors of renew and release say it. */
const tokenSources = (key: string) => `--token, DLOCK_TOKEN with DLOCK_KEY=${key}, or a DLOCK_HELD entry for ${key}`;

/** dlock renew: the key and its owner's token. */
export interface RenewConfig {
  config: ConnectionConfig;
  key: string;
  token: string;
}

/** dlock renew needs the owner token: only the holder extends its lease. */
export function renewConfig(key: string | undefined, raw: RawOptions, env: Env): RenewConfig {
  const config = connectionConfig(raw, env);
  // The options before the key: `renew --token k` is a bad token, not a missing key.
  if (raw.token !== undefined) validateToken('--token', raw.token);
  const validKey = validateKey(key);
  const token = ownerToken(validKey, raw, env);
  if (!token) {
    throw new UsageError(`renew needs the owner token: ${tokenSources(validKey)} (as dlock acquire exports them)`);
  }
  return { config, key: validKey, token };
}

/**
 * Who releases: the owner, by its token (releaseConfig refuses an owner's release without one: the
 * one place that rule is written), or --force, whoever holds it.
 */
export type Releaser = { force: false; token: string } | { force: true; token: undefined };

/** dlock release: the owner's release (with its token), or --force's (whoever holds it). */
export type ReleaseConfig = Releaser & {
  config: ConnectionConfig;
  key: string;
  /** --force --now: open the lock to new holders at once. */
  now: boolean;
  /** --force --slot n: only that slot's holder. */
  slot: number | undefined;
  /**
   * The token is one a nested acquire printed in DLOCK_NESTED (and DLOCK_KEY or DLOCK_HELD names
   * the key): an enclosing dlock holds the lock, and this release leaves it to that holder.
   */
  nested: boolean;
  /**
   * --exit-status n (0–255): how the section ended, recorded in the history and told to its
   * keeper (pings, hooks); undefined: "unknown".
   */
  exitStatus: string | undefined;
};

/** --now and --slot only with --force, the token only without it, and the owner's release needs one. */
export function releaseConfig(key: string | undefined, raw: RawOptions, env: Env): ReleaseConfig {
  const config = connectionConfig(raw, env);
  const force = Boolean(raw.force);
  const now = Boolean(raw.now);
  if (force && raw.token !== undefined)
    throw new UsageError('--force and --token: choose one (--force releases whoever holds it)');
  if (now && !force) throw new UsageError('--now needs --force');
  const slot = raw.slot === undefined ? undefined : integer('--slot', raw.slot, 0, MAX_SLOTS - 1);
  if (slot !== undefined && !force) throw new UsageError('--slot needs --force (your own release knows its slot)');
  const exitStatus = releaseExitStatus(raw, force);
  // The options before the key: `release --slot k` is a bad --slot, not a missing key.
  if (raw.token !== undefined) validateToken('--token', raw.token);
  const validKey = validateKey(key);
  const releaser: Releaser = force
    ? { force, token: undefined }
    : { force, token: releaseToken(validKey, ownerToken(validKey, raw, env)) };
  const { token } = releaser;
  const described = env.DLOCK_KEY === validKey || heldLocks(env).some((lock) => lock.key === validKey);
  const nested = token !== undefined && described && nestedTokens(env).includes(token);
  return { config, key: validKey, ...releaser, now, slot, nested, exitStatus };
}

/** The owner's release needs its token. */
function releaseToken(key: string, token: string | undefined): string {
  if (token) return token;
  throw new UsageError(
    `release needs the owner token: ${tokenSources(key)} (as dlock acquire exports them); ` +
      `to take a lock from whoever holds it, run: dlock release --force ${key}`,
  );
}

/** --exit-status: the section's exit status, 0–255; not with --force (the holder it removes says nothing). */
function releaseExitStatus(raw: RawOptions, force: boolean): string | undefined {
  if (raw.exitStatus === undefined) return undefined;
  if (force) throw new UsageError("--exit-status is the owner's: not with --force");
  return String(integer('--exit-status', raw.exitStatus, 0, 255));
}
