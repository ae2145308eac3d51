// --reason (run, acquire, hold) and DLOCK_REASON: one line of text, bounded.

import { UsageError } from '../errors.js';
import { REASON_MAX, refusal, type Capabilities } from '../backend/index.js';
import type { Env, RawOptions } from './options.js';
import { toJson } from '../untrusted.js';

/** Control, format and line-separator characters: a reason is one line of plain text. */
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u;

/**
 * --reason, else DLOCK_REASON (run and acquire; hold takes the option only): 1 to REASON_MAX characters, none of
 * them a control character. Where the store keeps no reasons (caps.holds), the option is refused and the
 * variable, which may be set for every job, is left unused.
 */
export function reasonOf(raw: RawOptions, env: Env, can: Capabilities): string | undefined {
  const given = raw.reason !== undefined;
  const text = given ? raw.reason : env.DLOCK_REASON || undefined;
  if (text === undefined) return undefined;
  const option = given ? '--reason' : 'DLOCK_REASON';
  if (!can.holds) {
    if (given) throw new UsageError(`--reason ${refusal(can, 'holds')}`);
    return undefined;
  }
  return checkedReason(option, text);
}

/** One line of 1 to REASON_MAX characters (code points), without control or format characters. */
export function checkedReason(option: string, text: string): string {
  const length = [...text].length;
  if (text.trim() === '') throw new UsageError(`${option}: must not be empty (got ${toJson(text)})`);
  if (length > REASON_MAX) throw new UsageError(`${option}: at most ${REASON_MAX} characters (got ${length})`);
  if (UNPRINTABLE.test(text)) {
    const shown = toJson(text.length > 80 ? `${text.slice(0, 80)}…` : text);
    throw new UsageError(`${option}: must be one line of text without control characters (got ${shown})`);
  }
  return text;
}
