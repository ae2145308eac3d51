// Every script's reply checked in one place before anything uses it (pure; the header of each
// lua/*.lua says what it returns). A reply of any other shape is not from a Redis running dlock's
// scripts: the instance failed (MalformedReplyError), and nothing in the reply is used.
// Replies arrive as ioredis gives them: bulk strings as strings, integers as numbers, nil null.

import { MalformedReplyError } from '../client/describe.js';
import { cut, parseCount, SHOWN_MAX } from '../../../untrusted.js';
import { REASON_MAX } from '../../../backend/holder.js';
import { detailsOf, holderFromDetails, holderFromReply, holdersFromReply, waiterFromDetails } from './holder.js';
import { isHolderKind, MODES, slotsOf, type HoldMode, type HolderKind } from '../../../backend/mode.js';
import { MAX_SLOTS, type DoneMark, type Holder, type Superseder, type Waiter } from '../../../backend/holder.js';
import type { LockState } from '../../../backend/backend.js';

/** Largest fencing token: Redis' INCR counts in a signed 64-bit integer, 2^63 − 1 (19 digits). */
export const MAX_FENCE = '9223372036854775807';
/** Most fields a lock hash holds (dlock writes eight, `release --force` one more; --slots/--shared two per holder). */
const MAX_FIELDS = 2 * MAX_SLOTS + 64;

/**
 * A fencing token as INCR makes them: decimal digits only, no sign, no leading zero, from 1 to
 * 2^63 − 1. Checked before a token is compared, raised to, shown or handed to a child.
 */
export function isFence(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    /^[1-9][0-9]{0,18}$/.test(value) &&
    (value.length < MAX_FENCE.length || value <= MAX_FENCE)
  );
}

export type AcquireReply = { acquired: true; fence: string } | { acquired: false; pttlMs: number; owner: string };

/** ACQUIRE: {1, fence} | {0, pttl, owner}. */
export function parseAcquireReply(reply: unknown): AcquireReply {
  if (Array.isArray(reply) && reply.length === 2 && reply[0] === 1) {
    if (!isFence(reply[1])) throw badFence('acquire', 'a fencing token', reply[1]);
    return { acquired: true, fence: reply[1] };
  }
  if (Array.isArray(reply) && reply.length === 3 && reply[0] === 0 && isPttl(reply[1], -1) && isField(reply[2])) {
    return { acquired: false, pttlMs: reply[1], owner: reply[2] };
  }
  throw malformed('acquire', reply, '{1, fence} or {0, ttl, owner}');
}

/** RELEASE: 1 (deleted, waiters told), 2 (deleted, PUBLISH denied), 0 (not ours), 3 (not ours: forced). */
export function parseReleaseReply(reply: unknown): 'released' | 'unannounced' | 'not-ours' | 'forced' {
  if (reply === 1) return 'released';
  if (reply === 2) return 'unannounced';
  if (reply === 0) return 'not-ours';
  if (reply === 3) return 'forced';
  throw malformed('release', reply, '0, 1, 2 or 3');
}

/** EXTEND, RAISE_FENCE: 1 (done) or 0 (not ours). */
export function parseFlagReply(script: string, reply: unknown): boolean {
  if (reply === 0 || reply === 1) return reply === 1;
  throw malformed(script, reply, '0 or 1');
}

/** The owner shown for a removed holder of --slots/--shared (its token is not returned). */
export const REMOVED = '(removed)';

export type EnterReply =
  | { acquired: true; fence: string; slot: number | undefined }
  /**
   * `place`: 1 = first in line, 0 = not in line (--no-wait, or kept out: final); `nextInMs`: when a holder's
   * lease ends that would let us in.
   */
  | { acquired: false; place: number; nextInMs: number | undefined; ticket: string }
  /** The key is in use in another mode or with another n. */
  | {
      acquired: false;
      mismatch: { kind: HolderKind; slots: number; holders: number; waiters: number };
    }
  /** --once-per: a run succeeded within its window. */
  | { acquired: false; done: DoneMark }
  /** --supersede: a newer --supersede waiter took our place in line. */
  | { acquired: false; supersededBy: Superseder };

/**
 * The mark's JSON is data anyone with write access can forge: every field is read leniently
 * (cut, numbers only when they are times), never a reason to fail the instance.
 */
export function parseDoneMark(raw: string, leftMs: number, nowMs: number): DoneMark {
  let fields: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(raw.length > 64 * 1024 ? '{}' : raw);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) fields = parsed as Record<string, unknown>;
  } catch {
    // Not dlock's JSON: the key is done all the same, by whom is unknown.
  }
  const text = (value: unknown) => (typeof value === 'string' || typeof value === 'number' ? cut(String(value)) : '');
  const time = (value: unknown) => parseCount(typeof value === 'string' ? value : undefined, 0, 8.64e15);
  const untilMs = nowMs + leftMs <= 8.64e15 ? nowMs + leftMs : undefined;
  const who = { host: text(fields.host), pid: text(fields.pid), cmd: text(fields.cmd), fence: text(fields.fence) };
  return { ...who, startedMs: time(fields.started_ms), finishedMs: time(fields.finished_ms), untilMs };
}

/** Who superseded a waiter: its mark's JSON, read leniently like a done mark (forged, it is only shown). */
function superseder(raw: string): Superseder {
  const fields = detailsOf(raw.length > 64 * 1024 ? '{}' : raw);
  return {
    host: cut(fields.host ?? ''),
    pid: cut(fields.pid ?? ''),
    cmd: cut(fields.cmd ?? ''),
    atMs: parseCount(fields.at_ms, 1, 8.64e15),
  };
}

/**
 * ENTER: {1, fence, slot} | {0, place, ms, --supersede ticket} | {2, kind, n, holders, waiters} | {3, done mark
 * JSON, ms left, server ms} | {4, superseder JSON}. `mode`: how this dlock asked to hold, which bounds the slot a
 * grant may carry.
 */
export function parseEnterReply(reply: unknown, mode: HoldMode): EnterReply {
  if (Array.isArray(reply) && reply.length === 2 && reply[0] === 4 && isField(reply[1])) {
    return { acquired: false, supersededBy: superseder(reply[1]) };
  }
  if (
    Array.isArray(reply) &&
    reply.length === 4 &&
    reply[0] === 3 &&
    isField(reply[1]) &&
    isPttl(reply[2], -2) &&
    isPttl(reply[3], 0)
  ) {
    return { acquired: false, done: parseDoneMark(reply[1], Math.max(0, reply[2]), reply[3]) };
  }
  if (Array.isArray(reply) && reply.length === 3 && reply[0] === 1 && isPttl(reply[2], -1) && reply[2] < MAX_SLOTS) {
    if (!isFence(reply[1])) throw badFence('enter', 'a fencing token', reply[1]);
    return { acquired: true, fence: reply[1], slot: grantedSlot(reply[2], mode) };
  }
  if (
    Array.isArray(reply) &&
    reply.length === 4 &&
    reply[0] === 0 &&
    isPttl(reply[1], 0) &&
    isPttl(reply[2], -2) &&
    typeof reply[3] === 'string' &&
    /^\d{1,16}$/.test(reply[3])
  ) {
    return { acquired: false, place: reply[1], nextInMs: reply[2] >= 0 ? reply[2] : undefined, ticket: reply[3] };
  }
  if (
    Array.isArray(reply) &&
    reply.length === 5 &&
    reply[0] === 2 &&
    isHolderKind(reply[1]) &&
    isPttl(reply[2], 0) &&
    isPttl(reply[3], 0) &&
    isPttl(reply[4], 0)
  ) {
    return { acquired: false, mismatch: { kind: reply[1], slots: reply[2], holders: reply[3], waiters: reply[4] } };
  }
  throw malformed(
    'enter',
    reply,
    '{1, fence, slot}, {0, place, ms, ticket}, {2, mode, n, holders, waiters} or {3, done, ms, time}',
  );
}

/**
 * The slot of a grant: 0 … n−1 with --slots n, none (-1) otherwise. Any other slot would reach
 * the command as DLOCK_SLOT beside another holder of it: the instance failed.
 */
function grantedSlot(slot: number, mode: HoldMode): number | undefined {
  const { slotted } = MODES[mode.kind];
  const n = slotsOf(mode);
  if (!slotted && slot === -1) return undefined;
  if (slotted && slot >= 0 && slot < n) return slot;
  const expected = slotted ? `0 to ${n - 1} for --slots ${n}` : '-1, no slot, without --slots';
  throw new MalformedReplyError(`it answered the enter script with slot ${slot} (expected ${expected})`);
}

/** The lock's state as the inspect script reads it, with the fence counter and the server's clock. */
export interface InspectReply extends LockState {
  /** The last fence issued here ("0" if none yet). */
  counter: string;
  /** The server's clock (TIME) when it was read, ms: what holders' and waiters' ages count to. */
  serverMs: number;
}

/** INSPECT: {pttl, counter or nil, flat HGETALL, flat holders' ends, flat line, line length, server ms}. */
export function parseInspectReply(reply: unknown): InspectReply {
  if (
    !Array.isArray(reply) ||
    reply.length !== 7 ||
    !isPttl(reply[0], -2) ||
    !isPttl(reply[5], 0) ||
    !isPttl(reply[6], 0)
  ) {
    throw malformed('inspect', reply, '{ttl, counter, holder, holders, line, length, time}');
  }
  const [pttl, counter, flat, ends, line, lineLength, nowMs] = reply;
  if (counter !== null && !isFence(counter)) throw badFence('inspect', 'a fence counter', counter);
  parseHolder('inspect', flat);
  if (
    !Array.isArray(ends) ||
    ends.length % 2 !== 0 ||
    !ends.every(isField) ||
    !Array.isArray(line) ||
    line.length % 3 !== 0 ||
    !line.every(isField)
  ) {
    throw malformed('inspect', reply, 'holders and the line as lists of strings');
  }
  const endsByOwner = new Map<string, number>();
  for (let i = 0; i < ends.length; i += 2) endsByOwner.set(ends[i], Number(ends[i + 1]));
  const { mode, holders } = holdersFromReply(flat, endsByOwner, nowMs);
  const waiters: Waiter[] = [];
  for (let i = 0; i < line.length; i += 3) waiters.push(waiterFromDetails(line[i + 2], nowMs));
  return {
    holder: holders[0],
    holders,
    mode,
    ttlLeftMs: pttl,
    counter: counter ?? '0',
    line: waiters,
    lineLength,
    serverMs: nowMs,
  };
}

/** FORCE_RELEASE: {ms closed, flat HGETALL, holders' details, server ms}. */
export function parseForceReleaseReply(reply: unknown): { holders: Holder[]; closedForMs: number; serverMs: number } {
  if (
    !Array.isArray(reply) ||
    reply.length !== 4 ||
    !isPttl(reply[0], 0) ||
    !Array.isArray(reply[2]) ||
    !reply[2].every(isField) ||
    !isPttl(reply[3], 0)
  ) {
    throw malformed('force-release', reply, '{ttl, holder, holders, time}');
  }
  const exclusive = parseHolder('force-release', reply[1]);
  // Each one listed was held, and is marked as owned; but one closed before (its details say when): no owner.
  const others = (reply[2] as string[]).map((raw) => {
    const holder = holderFromDetails(raw);
    return { ...holder, owner: holder.forcedMs ? '' : REMOVED };
  });
  return { holders: exclusive ? [exclusive] : others, closedForMs: reply[0], serverMs: reply[3] };
}

/**
 * A flat HGETALL of a lock hash: pairs of bounded strings. Its fields are only shown (status,
 * the busy line, release --force), never used: a forged `fence` is shown escaped like any other
 * field, while every token dlock hands out or raises a counter to is checked (acquire, raise).
 */
function parseHolder(script: string, flat: unknown): Holder | undefined {
  if (!Array.isArray(flat) || flat.length % 2 !== 0 || flat.length > MAX_FIELDS * 2 || !flat.every(isField)) {
    throw malformed(script, flat, "the lock's fields: pairs of strings");
  }
  return holderFromReply(flat);
}

/** SCAN: {cursor, names}; the cursor a decimal string, the names strings. */
export function parseScanReply(reply: unknown): { cursor: string; names: string[] } {
  if (
    Array.isArray(reply) &&
    reply.length === 2 &&
    typeof reply[0] === 'string' &&
    /^\d{1,20}$/.test(reply[0]) &&
    Array.isArray(reply[1]) &&
    reply[1].every(isField)
  ) {
    return { cursor: reply[0], names: reply[1] };
  }
  throw new MalformedReplyError(`it answered SCAN with ${shape(reply)} (expected {cursor, names})`);
}

function isPttl(value: unknown, min: number): value is number {
  return Number.isSafeInteger(value) && (value as number) >= min;
}

/** Any size: a forged 1 MB field is cut when it is read (views), and the reader bounds a reply at 8 MiB. */
function isField(value: unknown): value is string {
  return typeof value === 'string';
}

function malformed(script: string, reply: unknown, expected: string): MalformedReplyError {
  return new MalformedReplyError(`it answered the ${script} script with ${shape(reply)} (expected ${expected})`);
}

function badFence(script: string, what: string, value: unknown): MalformedReplyError {
  return new MalformedReplyError(
    `it answered the ${script} script with ${what} of ${shape(value)} (expected a decimal integer from 1 to ` +
      `${MAX_FENCE})`,
  );
}

/**
 * What a reply is, for the message: its type and size, and a short string shown inert (it
 * comes from a server that is lying, and goes to a terminal). Never recurses: a reply may be
 * nested deeply.
 */
export function shape(value: unknown): string {
  if (value === null || value === undefined) return 'nil';
  if (typeof value === 'number') return `the integer ${value}`;
  if (typeof value === 'string') {
    if (Buffer.byteLength(value) > 40) return `a string of ${Buffer.byteLength(value)} bytes`;
    return `"${value.replace(/[^\x20-\x7e]|["\\]/gu, escape)}"`;
  }
  if (Array.isArray(value)) {
    const kinds = value
      .slice(0, 4)
      .map((v) =>
        Array.isArray(v)
          ? 'array'
          : v === null
            ? 'nil'
            : typeof v === 'number'
              ? 'integer'
              : typeof v === 'string'
                ? 'string'
                : 'error',
      );
    return value.length === 0
      ? 'an empty array'
      : `an array of ${value.length} (${kinds.join(', ')}${value.length > 4 ? ', …' : ''})`;
  }
  if (value instanceof Error) return 'an error';
  return typeof value;
}

function escape(c: string): string {
  if (c === '"' || c === '\\') return `\\${c}`;
  const code = c.codePointAt(0)!;
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16)}}`;
}

/** Most fields one entry may have (dlock writes at most 12 besides `event`). */
const MAX_ENTRY_FIELDS = 64;

/** One entry of a key's history stream, as stored (scripts.ts HISTORY): its ID ("ms-seq") and its fields, cut. */
export interface StreamEntry {
  id: string;
  fields: Record<string, string>;
}

/**
 * XREVRANGE: a list of {id, flat fields}. The shape is checked (a lie fails the instance); the
 * fields are data anyone who can write to the stream could forge, so they are only cut here,
 * checked when made events (history.ts) and escaped where they are printed.
 */
export function parseHistoryReply(reply: unknown): StreamEntry[] {
  const entry = (item: unknown): item is [string, string[]] =>
    Array.isArray(item) &&
    item.length === 2 &&
    typeof item[0] === 'string' &&
    /^\d{1,16}-\d{1,20}$/.test(item[0]) &&
    Array.isArray(item[1]) &&
    item[1].length % 2 === 0 &&
    item[1].length <= 2 * MAX_ENTRY_FIELDS &&
    item[1].every(isField);
  if (!Array.isArray(reply) || !reply.every(entry))
    throw new MalformedReplyError(`it answered XREVRANGE with ${shape(reply)} (expected a list of {id, fields})`);
  return reply.map(([id, flat]) => {
    const fields: Record<string, string> = Object.create(null);
    // A --reason may be longer than other fields (REASON_MAX): it is cut to that.
    for (let i = 0; i < flat.length; i += 2)
      fields[cut(flat[i], 64)] = cut(flat[i + 1], flat[i] === 'reason' ? REASON_MAX : SHOWN_MAX);
    return { id, fields };
  });
}
