// The board's JSON answers, from a Reading of the store: the data with the store's clock (what the
// page ages every time from), or 503 while the store cannot be read, with the last good data
// marked stale and since when it has failed.

import { epochMs } from '../clock.js';
import { DlockError } from '../errors.js';
import { toJson } from '../untrusted.js';
import type { Reading } from './refresh.js';

/** An answer: its status and the JSON text. */
export interface JsonAnswer {
  status: number;
  body: string;
}

/** What the store's failure says: dlock's own one-line message, never a stack (a bug says only that it is one). */
export function failureMessage(error: unknown): string {
  return error instanceof DlockError ? error.message : 'internal error (a bug: please report it; dlock serve logs it)';
}

/** `fields` of the value (with `storeMs`, its store clock at the read), stale and 503 while the reads fail. */
export function boardAnswer<T extends { storeMs: number }>(
  reading: Reading<T>,
  fields: (value: T) => Record<string, unknown>,
  extra: Record<string, unknown>,
): JsonAnswer {
  const { value, readAtMs, failing } = reading;
  const data =
    value && readAtMs !== undefined
      ? {
          ...fields(value),
          read_at_ms: readAtMs,
          read_store_ms: value.storeMs,
          // The store's clock now, as far as this host's clock has run since the read.
          store_now_ms: value.storeMs + (epochMs() - readAtMs),
        }
      : {};
  const outage = failing
    ? {
        stale: value !== undefined,
        error: failureMessage(failing.error),
        // Whole ms, as every *_ms field: the same instant in both.
        unreachable_since: new Date(Math.round(failing.sinceMs)).toISOString(),
        unreachable_since_ms: Math.round(failing.sinceMs),
      }
    : { stale: false };
  return { status: failing ? 503 : 200, body: `${toJson({ ...extra, ...outage, ...data })}\n` };
}

/** A JSON error answer. */
export function errorAnswer(status: number, message: string, more: Record<string, unknown> = {}): JsonAnswer {
  return { status, body: `${toJson({ error: message, ...more })}\n` };
}
