// What a lock hash says about its holder, as status, release --force and the spinner show it.
// Anyone who can write to Redis can forge the hash: every field is cut to SHOWN_MAX here, once,
// before anything formats it, and the numbers are read strictly (a bad one is unknown, never
// NaN or an invalid date). The text stays raw: whoever prints it escapes it (../untrusted.ts).

import { cut, parseCount } from '../untrusted.js';

/** The latest time a Date can hold (ms since the epoch). */
const MAX_DATE_MS = 8.64e15;

export interface Holder {
  /** The owner token; "" when nobody owns the key: closed by `release --force`, or not dlock's. Never shown, never cut. */
  owner: string;
  fence: string;
  host: string;
  /** As stored: dlock writes a number, a forged hash anything (see pidNumber). */
  pid: string;
  cmd: string;
  /** When it was taken (ms since the epoch); undefined when the field is missing or not a time. */
  sinceMs?: number;
  /** The lease length; undefined when missing or not a number. */
  ttlMs?: number;
  /** When `release --force` closed it (ms since the epoch), 0 if it did not. */
  forcedMs: number;
}

/** Turn a flat HGETALL reply into a Holder, or undefined when the hash was empty. */
export function holderFromReply(flat: unknown): Holder | undefined {
  if (!Array.isArray(flat) || flat.length === 0) return undefined;
  const fields: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) fields[String(flat[i])] = String(flat[i + 1]);
  return {
    owner: fields.owner ?? '',
    fence: cut(fields.fence ?? ''),
    host: cut(fields.host ?? ''),
    pid: cut(fields.pid ?? ''),
    cmd: cut(fields.cmd ?? ''),
    sinceMs: parseCount(fields.since_ms, 1, MAX_DATE_MS),
    ttlMs: parseCount(fields.ttl_ms, 0, Number.MAX_SAFE_INTEGER),
    forcedMs: parseCount(fields.forced_ms, 1, MAX_DATE_MS) ?? 0,
  };
}

/** The pid as a number, or undefined when the hash holds something else. */
export function pidNumber(holder: Holder): number | undefined {
  return parseCount(holder.pid, 1, 2 ** 31 - 1);
}
