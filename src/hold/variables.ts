// The section's variables (DLOCK_KEY, DLOCK_TOKEN, DLOCK_FENCING_TOKEN, DLOCK_TTL_MS, DLOCK_SLOT,
// and DLOCK_NESTED from a nested acquire), built here only: the environment of `dlock run`'s
// command, and what `dlock acquire` prints on stdout, as POSIX-shell export lines for eval or as
// one JSON object.

import type { AcquireFormat } from '../config/index.js';
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
  /**
   * From a nested acquire: the token an enclosing dlock holds the key with (DLOCK_TOKEN). A
   * `dlock release` of that token releases nothing: the enclosing holder releases the lock.
   */
  DLOCK_NESTED?: string;
}

/** The lock a section holds, known before it is granted: its key, owner token and lease length. */
export interface SectionLock {
  key: string;
  token: string;
  /** A number, or the DLOCK_TTL_MS a nested acquire inherited, printed again as it came. */
  ttlMs: number | string;
  /** --heartbeat: the file `dlock heartbeat` touches (DLOCK_HEARTBEAT_FILE). */
  heartbeatFile?: string;
}

/** What the grant brings: the fencing token, and with --slots the slot held. */
export interface SectionGrant {
  fence: string;
  slot?: number | string;
}

/** DLOCK_KEY, DLOCK_TOKEN and DLOCK_TTL_MS: what a command made ready while waiting already has. */
export function lockVariables({
  key,
  token,
  ttlMs,
  heartbeatFile,
}: SectionLock): Omit<SectionVariables, 'DLOCK_FENCING_TOKEN'> {
  const heartbeat = heartbeatFile === undefined ? {} : { DLOCK_HEARTBEAT_FILE: heartbeatFile };
  return { DLOCK_KEY: key, DLOCK_TOKEN: token, DLOCK_TTL_MS: String(ttlMs), ...heartbeat };
}

/** Every section variable of a granted lock, in the order acquire prints them (DLOCK_SLOT only with a slot). */
export function holdVariables(lock: SectionLock, { fence, slot }: SectionGrant): SectionVariables {
  const { DLOCK_KEY, DLOCK_TOKEN, DLOCK_TTL_MS, DLOCK_HEARTBEAT_FILE } = lockVariables(lock);
  const slotted = slot === undefined ? {} : { DLOCK_SLOT: String(slot) };
  const heartbeat = DLOCK_HEARTBEAT_FILE === undefined ? {} : { DLOCK_HEARTBEAT_FILE };
  return { DLOCK_KEY, DLOCK_TOKEN, DLOCK_FENCING_TOKEN: fence, DLOCK_TTL_MS, ...slotted, ...heartbeat };
}

/**
 * The section variables of `hold` on `config.key` (DLOCK_SLOT when --slots was given,
 * DLOCK_HEARTBEAT_FILE with a `heartbeatFile`).
 */
export function heldVariables(
  config: { key: string; slotted: boolean },
  hold: Hold,
  heartbeatFile?: string,
): SectionVariables {
  const lock = { key: config.key, token: hold.owner, ttlMs: hold.ttlMs, heartbeatFile };
  return holdVariables(lock, { fence: hold.fence, slot: hold.slotVariable(config.slotted) });
}

/** The variables as acquire prints them: `export` lines for eval, or one JSON object. */
export function formatVariables(variables: SectionVariables, format: AcquireFormat): string {
  if (format === 'json') {
    const slot = variables.DLOCK_SLOT === undefined ? {} : { slot: Number(variables.DLOCK_SLOT) };
    const file = variables.DLOCK_HEARTBEAT_FILE;
    const heartbeat = file === undefined ? {} : { heartbeat_file: file };
    const nested = variables.DLOCK_NESTED === undefined ? {} : { nested: true };
    const { DLOCK_KEY: key, DLOCK_TOKEN: token, DLOCK_FENCING_TOKEN: fence, DLOCK_TTL_MS: ttl } = variables;
    return `${JSON.stringify({ key, token, fence, ttl_ms: Number(ttl), ...slot, ...heartbeat, ...nested })}\n`;
  }
  return Object.entries(variables)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => `export ${name}=${shellQuote(value)}\n`)
    .join('');
}

/** Single-quoted for any POSIX shell: nothing inside is special but the quote itself. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
