// Who holds a lock and who waits for it, as every backend reports them: the vocabulary status, the
// spinner, the errors and the history speak. Anything read from a store may be forged: a backend
// cuts the text fields when it decodes them (../untrusted.ts), and whoever prints them escapes them.

import { parseCount } from '../untrusted.js';
import type { HolderKind } from './mode.js';

/** The most slots a key can have (--slots). */
export const MAX_SLOTS = 1000;
/** --priority runs from −PRIORITY_MAX to PRIORITY_MAX (the Redis line gives each its band of scores). */
export const PRIORITY_MAX = 1000;

/** A priority as stored (a decimal integer in range), else 0: forged details never move a waiter past the bounds. */
export function parsePriority(text: string | undefined): number {
  if (text === undefined || !/^-?[0-9]{1,4}$/.test(text)) return 0;
  const value = Number(text);
  return Math.abs(value) <= PRIORITY_MAX ? value : 0;
}

/** The longest --reason, in characters: longer is a usage error; a stored one is cut to it when read back. */
export const REASON_MAX = 512;

/** Who a dlock says it is when it takes a lock: stored with the hold, shown by status. */
export interface HolderMeta {
  host: string;
  /** "" for a hold no process keeps (`dlock acquire --no-keeper`: its process exits at once). */
  pid: number | '';
  cmd: string;
  /** --reason: why it is held (run, acquire, hold); stored with the holder and with its place while it waits. */
  reason?: string;
  /** Who took it: the OS user name ("" when it cannot be told). */
  user?: string;
  /**
   * `dlock hold`: a holder with no process; `forever`: it has no end, it lasts until `dlock unhold`; `untilMs`
   * (--until, ms since the epoch): its lease ends then on the store's clock, whenever it is taken.
   */
  hold?: { forever: boolean; untilMs?: number };
}

/** What every holder has, whatever its kind. */
export interface HolderFields {
  /**
   * The owner token; "" when no dlock owns the hold: closed by `release --force` (see isClosed), or not dlock's.
   * Never shown, never cut.
   */
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
  /** --slots/--shared: what is left of this holder's lease (ms); the exclusive hash has its PTTL. */
  ttlLeftMs?: number;
  /** The job's --max-hold, as its renewals store it; undefined when none (or not a number). */
  maxHoldMs?: number;
  /** When the job last ran `dlock heartbeat` (ms since the epoch), as its renewals store it. */
  beatMs?: number;
  /** --reason, as stored (cut); undefined when none. */
  reason?: string;
  /** Who took it (the OS user name), as stored (cut); undefined when not stored (an older dlock's holder). */
  user?: string;
  /** Taken by `dlock hold`: no process holds it, it ends at `untilMs` or by `dlock unhold`. */
  hold?: boolean;
  /** A hold's end (server ms); undefined for a hold that lasts until `dlock unhold`. */
  untilMs?: number;
}

/**
 * A holder and how it holds (its kind, as the lock's mode says): a holder of --slots has a slot
 * (0 … n−1; undefined when forged details hold none), no other kind has one.
 */
export type Holder = HolderFields &
  ({ kind: Exclude<HolderKind, 'slots'>; slot?: undefined } | { kind: 'slots'; slot: number | undefined });

/** A waiter in line, as its details say. */
export interface Waiter {
  mode: HolderKind;
  host: string;
  pid: string;
  cmd: string;
  /** When it joined the line (server ms), undefined when not a time. */
  sinceMs?: number;
  /** How long it has waited, on the server's clock (undefined when not known). */
  waitedMs?: number;
  /** --reason, as its details say (cut); undefined when none. */
  reason?: string;
  /** Who waits (the OS user name), when its details say. */
  user?: string;
  /** A `dlock hold` waiting to begin. */
  hold?: boolean;
  /** Its --priority (0 when the details hold none, or not an integer in range). */
  priority: number;
  /** It asked for --supersede. */
  supersede: boolean;
}

/** Who took a --supersede waiter's place in line, as its dlock said, and when (server ms; undefined: not known). */
export interface Superseder {
  host: string;
  pid: string;
  cmd: string;
  atMs?: number;
}

/** The done mark of --once-per: who last succeeded, when (server ms), and until when the key is done. */
export interface DoneMark {
  host: string;
  pid: string;
  cmd: string;
  fence: string;
  startedMs?: number;
  finishedMs?: number;
  /** Where the mark is, to delete it by hand (the Redis backend: its key). */
  where?: string;
  /** Server ms when the window ends; undefined past any date (a forged mark: SET … PX 9000000000000000). */
  untilMs?: number;
}

/**
 * What a renewal stores about the job in the holder's fields, for status: its --max-hold, and
 * how long ago it last ran `dlock heartbeat` (ms on this host's monotonic clock: the script
 * stores the server's time less it); undefined: leave the field as it is.
 */
export interface HolderProgress {
  maxHoldMs?: number;
  beatAgeMs?: number;
}

/**
 * Closed by release --force: nobody holds it, and nobody enters until its lease ends. Told by when it
 * was closed, not by its owner: a store's own holder has no dlock owner either (etcdctl lock's key
 * carries no details) and holds the lock.
 */
export function isClosed(holder: Pick<Holder, 'forcedMs'>): boolean {
  return holder.forcedMs > 0;
}

/** The pid as a number, or undefined when the hash holds something else. */
export function pidNumber(holder: Pick<Holder, 'pid'>): number | undefined {
  return parseCount(holder.pid, 1, 2 ** 31 - 1);
}
