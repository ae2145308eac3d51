// What a lock says about its holders and its line, as status, release --force and the spinner
// show it. Anyone who can write to Redis can forge any of it: every field is cut to SHOWN_MAX
// here, once, before anything formats it, and the numbers are read strictly (a bad one is
// unknown, never NaN or an invalid date). The text stays raw: whoever prints it escapes it
// (../untrusted.ts).

import { cut, parseCount } from '../../../untrusted.js';
import { isHolderKind, MODES, type HoldMode, type HolderKind } from '../../../backend/mode.js';
import {
  MAX_SLOTS,
  parsePriority,
  REASON_MAX,
  type Holder,
  type HolderFields,
  type Waiter,
} from '../../../backend/holder.js';

/** The latest time a Date can hold (ms since the epoch). */
const MAX_DATE_MS = 8.64e15;

/** Turn a flat HGETALL reply of a lock hash into fields, or undefined when the hash was empty. */
function fieldsOf(flat: unknown): Record<string, string> | undefined {
  if (!Array.isArray(flat) || flat.length === 0) return undefined;
  const fields: Record<string, string> = Object.create(null);
  for (let i = 0; i + 1 < flat.length; i += 2) fields[String(flat[i])] = String(flat[i + 1]);
  return fields;
}

/** The exclusive holder of a flat HGETALL reply, or undefined when the hash was empty. */
export function holderFromReply(flat: unknown): Holder | undefined {
  const fields = fieldsOf(flat);
  return fields && { ...holderFromFields(fields), kind: 'exclusive' };
}

function holderFromFields(fields: Record<string, string | undefined>): HolderFields {
  return {
    owner: fields.owner ?? '',
    fence: cut(fields.fence ?? ''),
    host: cut(fields.host ?? ''),
    pid: cut(fields.pid ?? ''),
    cmd: cut(fields.cmd ?? ''),
    sinceMs: parseCount(fields.since_ms, 1, MAX_DATE_MS),
    ttlMs: parseCount(fields.ttl_ms, 0, Number.MAX_SAFE_INTEGER),
    forcedMs: parseCount(fields.forced_ms, 1, MAX_DATE_MS) ?? 0,
    ...optional('maxHoldMs', parseCount(fields.max_hold_ms, 1, MAX_DATE_MS)),
    ...optional('beatMs', parseCount(fields.beat_ms, 1, MAX_DATE_MS)),
    ...purpose(fields),
    ...(fields.hold === '1' ? { hold: true, ...optional('untilMs', parseCount(fields.until_ms, 1, MAX_DATE_MS)) } : {}),
  };
}

/** --reason and the user, when stored (cut): a holder's or a waiter's. */
function purpose(fields: Record<string, string | undefined>): { reason?: string; user?: string } {
  return {
    ...(fields.reason === undefined || fields.reason === '' ? {} : { reason: cut(fields.reason, REASON_MAX) }),
    ...(fields.user === undefined || fields.user === '' ? {} : { user: cut(fields.user) }),
  };
}

/** `{ [name]: value }`, or nothing when the value is undefined: the holder has no such field. */
function optional<K extends string>(name: K, value: number | undefined): { [P in K]?: number } {
  return value === undefined ? {} : ({ [name]: value } as { [P in K]?: number });
}

/** A JSON object of strings (a holder's or a waiter's details); anything else is {}. */
export function detailsOf(raw: unknown): Record<string, string | undefined> {
  if (typeof raw !== 'string') return {};
  try {
    const value: unknown = JSON.parse(raw);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return {};
    const out: Record<string, string | undefined> = Object.create(null);
    for (const [name, field] of Object.entries(value)) if (typeof field === 'string') out[name] = field;
    return out;
  } catch {
    return {};
  }
}

/**
 * The mode and every holder of a lock hash: its exclusive holder, or (a `mode` field) the
 * holders of --slots/--shared from their `h:<owner>` fields, with what is left of each lease
 * from `ends` (owner → server ms) at server time `nowMs`. Holders renamed "!<owner>" were
 * closed by `release --force` (owner "").
 */
export function holdersFromReply(
  flat: unknown,
  ends: Map<string, number>,
  nowMs: number,
): { mode: HoldMode; holders: Holder[] } {
  const fields = fieldsOf(flat);
  if (!fields) return { mode: { kind: 'exclusive' }, holders: [] };
  const kind = isHolderKind(fields.mode) ? fields.mode : 'exclusive';
  if (!MODES[kind].manyHolders)
    return { mode: { kind: 'exclusive' }, holders: [{ ...holderFromFields(fields), kind: 'exclusive' }] };
  const mode = MODES[kind].mode(parseCount(fields.slots, 1, MAX_SLOTS) ?? 0);
  const holders: Holder[] = [];
  for (const [name, raw] of Object.entries(fields)) {
    if (!name.startsWith('h:')) continue;
    const id = name.slice(2);
    const end = ends.get(id);
    holders.push({
      ...holderFromDetails(raw, mode.kind),
      // "!<owner>": closed by release --force.
      owner: id.startsWith('!') ? '' : id,
      ...(end === undefined ? {} : { ttlLeftMs: Math.max(0, end - nowMs) }),
    });
  }
  holders.sort((a, b) => (a.slot ?? 0) - (b.slot ?? 0) || (a.sinceMs ?? 0) - (b.sinceMs ?? 0));
  return { mode, holders };
}

/**
 * A holder of --slots/--shared from its details JSON (owner ""): of the kind `kind` says, else as
 * its details say (a holder release --force removed: the mode is gone, a slot says --slots).
 */
export function holderFromDetails(raw: unknown, kind?: HolderKind): Holder {
  const details = detailsOf(raw);
  const slot = parseCount(details.slot, 0, MAX_SLOTS - 1);
  const fields = holderFromFields({ ...details, owner: '' });
  const as = kind ?? (slot !== undefined ? 'slots' : 'shared');
  return as === 'slots' ? { ...fields, kind: as, slot } : { ...fields, kind: as };
}

/** One waiter from its details JSON (forged details show as unknown). */
export function waiterFromDetails(raw: unknown, nowMs: number): Waiter {
  const details = detailsOf(raw);
  const mode = isHolderKind(details.mode) ? details.mode : 'exclusive';
  const sinceMs = parseCount(details.since_ms, 1, MAX_DATE_MS);
  return {
    mode,
    host: cut(details.host ?? ''),
    pid: cut(details.pid ?? ''),
    cmd: cut(details.cmd ?? ''),
    sinceMs,
    waitedMs: sinceMs === undefined ? undefined : Math.max(0, nowMs - sinceMs),
    priority: parsePriority(details.priority),
    // With --supersede, its ticket (enter.lua).
    supersede: /^[1-9][0-9]{0,15}$/.test(details.supersede ?? ''),
    ...purpose(details),
    ...(details.hold === '1' ? { hold: true } : {}),
  };
}
