// The section's variables (DLOCK_KEY, DLOCK_TOKEN, DLOCK_FENCING_TOKEN, DLOCK_TTL_MS, DLOCK_SLOT, those of --heartbeat,
// DLOCK_HELD for the other locks enclosing dlocks hold, DLOCK_NESTED from a nested acquire, and the
// store's own variables for a holder, such as etcd's ETCD_LOCK_KEY and ETCD_LOCK_REV), built here
// only: the environment of `dlock run`'s command, and what `dlock acquire` prints on stdout, as
// POSIX-shell export lines for eval or as one JSON object.

import type { AcquireFormat, Env } from '../config/index.js';
import { heldAround, heldLocks, heldText, type EnclosingLock } from '../config/enclosing.js';
import type { Hold } from './hold.js';

export interface SectionVariables {
  DLOCK_KEY: string;
  DLOCK_TOKEN: string;
  DLOCK_FENCING_TOKEN: string;
  DLOCK_TTL_MS: string;
  /** With --slots: the slot held. */
  DLOCK_SLOT?: string;
  /** With --heartbeat: the file `dlock heartbeat` touches. */
  DLOCK_HEARTBEAT_FILE?: string;
  /** With --heartbeat: its interval in ms (as systemd's WATCHDOG_USEC tells a service its watchdog's). */
  DLOCK_HEARTBEAT_MS?: string;
  /** With --heartbeat under dlocks that watch one: their heartbeat files, colon-separated (heartbeat-file.ts). */
  DLOCK_HEARTBEAT_ENCLOSING?: string;
  /**
   * The other locks enclosing dlocks hold: `key=token,fence,ttl_ms,slot` entries, space-separated
   * (config/enclosing.ts); a nested run or acquire of one of those keys, at any depth, finds its token
   * there, and a section's `dlock release` and `renew` of one of them too.
   */
  DLOCK_HELD?: string;
  /**
   * From a nested acquire: the tokens enclosing dlocks hold their keys with, space-separated (this
   * key's DLOCK_TOKEN among them). A `dlock release` of one releases nothing: the enclosing holder
   * releases the lock.
   */
  DLOCK_NESTED?: string;
  /**
   * The store's own variables for a holder (Obtained.env: etcd's ETCD_LOCK_KEY and ETCD_LOCK_REV, as
   * `etcdctl lock` sets them), exported after dlock's; never a DLOCK_* name (storeVariables). Unlike
   * DLOCK_KEY … they are not moved aside for a section on another key: a section's own replace the
   * caller's of the same names, and a caller's the section does not set stay as they came (they
   * still describe a lock an enclosing section holds, as with nested `etcdctl lock`s).
   */
  store?: Record<string, string>;
}

/** The lock a section holds, known before it is granted: its key, owner token and lease length. */
export interface SectionLock {
  key: string;
  token: string;
  /** A number, or the DLOCK_TTL_MS a nested acquire inherited, printed again as it came. */
  ttlMs: number | string;
  /** --heartbeat: the file `dlock heartbeat` touches (DLOCK_HEARTBEAT_FILE). */
  heartbeatFile?: string;
  /** --heartbeat in ms (DLOCK_HEARTBEAT_MS), with heartbeatFile. */
  heartbeatMs?: number;
}

/** What the grant brings: the fencing token, with --slots the slot held, and the store's own variables. */
export interface SectionGrant {
  fence: string;
  slot?: number | string;
  store?: Record<string, string>;
}

/** DLOCK_KEY, DLOCK_TOKEN and DLOCK_TTL_MS: what a command made ready while waiting already has. */
export function lockVariables({
  key,
  token,
  ttlMs,
  heartbeatFile,
  heartbeatMs,
}: SectionLock): Omit<SectionVariables, 'DLOCK_FENCING_TOKEN'> {
  const heartbeat = heartbeatFile === undefined ? {} : { DLOCK_HEARTBEAT_FILE: heartbeatFile };
  if (heartbeatFile !== undefined && heartbeatMs !== undefined)
    Object.assign(heartbeat, { DLOCK_HEARTBEAT_MS: String(heartbeatMs) });
  return { DLOCK_KEY: key, DLOCK_TOKEN: token, DLOCK_TTL_MS: String(ttlMs), ...heartbeat };
}

/** Every section variable of a granted lock, in the order acquire prints them (DLOCK_SLOT only with a slot). */
export function holdVariables(lock: SectionLock, { fence, slot, store }: SectionGrant): SectionVariables {
  const { DLOCK_KEY, DLOCK_TOKEN, DLOCK_TTL_MS, DLOCK_HEARTBEAT_FILE, DLOCK_HEARTBEAT_MS } = lockVariables(lock);
  const slotted = slot === undefined ? {} : { DLOCK_SLOT: String(slot) };
  const heartbeat = DLOCK_HEARTBEAT_FILE === undefined ? {} : { DLOCK_HEARTBEAT_FILE };
  if (DLOCK_HEARTBEAT_MS !== undefined) Object.assign(heartbeat, { DLOCK_HEARTBEAT_MS });
  const own = storeVariables(store);
  const stored = Object.keys(own).length === 0 ? {} : { store: own };
  return { DLOCK_KEY, DLOCK_TOKEN, DLOCK_FENCING_TOKEN: fence, DLOCK_TTL_MS, ...slotted, ...heartbeat, ...stored };
}

/**
 * The store's variables a section may have: every name a POSIX shell exports, but dlock's own (DLOCK_*,
 * which the store's could otherwise override) and values with a NUL (which no environment holds).
 */
export function storeVariables(env: Record<string, string> | undefined): Record<string, string> {
  const kept = Object.entries(env ?? {}).filter(
    ([name, value]) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && !name.startsWith('DLOCK_') && !value.includes('\0'),
  );
  return Object.fromEntries(kept);
}

/**
 * The section variables of `hold` on `config.key` (DLOCK_SLOT when --slots was given,
 * DLOCK_HEARTBEAT_FILE and DLOCK_HEARTBEAT_MS with a `heartbeatFile`).
 */
export function heldVariables(
  config: { key: string; slotted: boolean; heartbeatMs?: number },
  hold: Hold,
  heartbeatFile?: string,
): SectionVariables {
  const lock = {
    key: config.key,
    token: hold.owner,
    ttlMs: hold.ttlMs,
    heartbeatFile,
    heartbeatMs: config.heartbeatMs,
  };
  return holdVariables(lock, { fence: hold.fence, slot: hold.slotVariable(config.slotted), store: hold.storeEnv });
}

/**
 * `variables` of a lock on `key` with DLOCK_HELD, for a caller whose environment is `env`: the
 * other locks the enclosing dlocks hold. Set when there is one, or when the caller has the
 * variable (printed "" then, so that eval drops what it held).
 */
export function withHeld<T extends SectionVariables>(variables: T, env: Env): T {
  const held = heldText(heldAround(env, variables.DLOCK_KEY));
  return held === '' && env.DLOCK_HELD === undefined ? variables : { ...variables, DLOCK_HELD: held };
}

/**
 * The environment of a command whose innermost lock `variables` describe: the caller's, with
 * DLOCK_HELD listing the caller's other locks (its innermost one among them) and none of the
 * caller's variables of its innermost lock left over (a DLOCK_SLOT of another key).
 */
export function enclosedEnv(
  callerEnv: Env,
  variables: Pick<SectionVariables, 'DLOCK_KEY'> & Partial<SectionVariables>,
): NodeJS.ProcessEnv {
  const held = heldText(heldAround(callerEnv, variables.DLOCK_KEY));
  const env: NodeJS.ProcessEnv = { ...callerEnv };
  for (const name of INNERMOST) delete env[name];
  const { store, ...own } = variables;
  Object.assign(env, store, own, held === '' ? {} : { DLOCK_HELD: held });
  for (const [name, value] of Object.entries(env)) if (value === undefined) delete env[name];
  return env;
}

/** The variables of the innermost lock, and DLOCK_HELD (a command's own heartbeat file aside). */
const INNERMOST = ['DLOCK_KEY', 'DLOCK_TOKEN', 'DLOCK_FENCING_TOKEN', 'DLOCK_TTL_MS', 'DLOCK_SLOT', 'DLOCK_HELD'];

/** The variables as acquire prints them: `export` lines for eval, or one JSON object. */
export function formatVariables(variables: SectionVariables, format: AcquireFormat): string {
  if (format === 'json') {
    const slot = variables.DLOCK_SLOT === undefined ? {} : { slot: Number(variables.DLOCK_SLOT) };
    const file = variables.DLOCK_HEARTBEAT_FILE;
    const every = variables.DLOCK_HEARTBEAT_MS;
    const heartbeat =
      file === undefined ? {} : { heartbeat_file: file, ...(every ? { heartbeat_ms: Number(every) } : {}) };
    const nested = variables.DLOCK_NESTED === undefined ? {} : { nested: true };
    const locks = heldLocks({ DLOCK_HELD: variables.DLOCK_HELD });
    const held = locks.length === 0 ? {} : { held: locks.map(heldJson) };
    const env = variables.store === undefined ? {} : { env: variables.store };
    const { DLOCK_KEY: key, DLOCK_TOKEN: token, DLOCK_FENCING_TOKEN: fence, DLOCK_TTL_MS: ttl } = variables;
    const lock = { key, token, fence, ttl_ms: Number(ttl), ...slot, ...heartbeat, ...nested, ...held, ...env };
    return `${JSON.stringify(lock)}\n`;
  }
  // dlock's own first, then the store's.
  const { store, ...own } = variables;
  return [...Object.entries(own), ...Object.entries(store ?? {})]
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .map(([name, value]) => `export ${name}=${shellQuote(value)}\n`)
    .join('');
}

/** One entry of DLOCK_HELD in acquire's JSON, as the lock itself is printed. */
function heldJson({ key, token, fence, ttlMs, slot }: EnclosingLock) {
  return {
    key,
    token,
    fence,
    ttl_ms: ttlMs === '' ? null : Number(ttlMs),
    ...(slot === '' ? {} : { slot: Number(slot) }),
  };
}

/** Single-quoted for any POSIX shell: nothing inside is special but the quote itself. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
