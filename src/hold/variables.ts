// What `dlock acquire` prints on stdout: the section's variables, as POSIX-shell export lines
// for eval, or as one JSON object.

import type { AcquireFormat } from '../config/index.js';

export interface SectionVariables {
  DLOCK_KEY: string;
  DLOCK_TOKEN: string;
  DLOCK_FENCING_TOKEN: string;
  DLOCK_TTL_MS: string;
  /** With --slots: the slot held. */
  DLOCK_SLOT?: string;
}

export function formatVariables(variables: SectionVariables, format: AcquireFormat): string {
  if (format === 'json') {
    const slot = variables.DLOCK_SLOT === undefined ? {} : { slot: Number(variables.DLOCK_SLOT) };
    const { DLOCK_KEY: key, DLOCK_TOKEN: token, DLOCK_FENCING_TOKEN: fence, DLOCK_TTL_MS: ttl } = variables;
    return `${JSON.stringify({ key, token, fence, ttl_ms: Number(ttl), ...slot })}\n`;
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
