// A key's history, as a backend that keeps one reports it: a list of typed events, newest first.
// A backend's history is data anyone who can write to its store could forge: the backend checks
// each field it converts (a number is a number in its range) and cuts all text; what it holds
// that is not a value dlock writes is kept only as `Unreadable` text, to be shown (escaped).

/** The history's cap (the Redis backend's XADD MAXLEN), and so the most `dlock history --count` shows. */
export const HISTORY_MAX = 1000;

/** A field the store holds that is no value dlock writes there (a forged history): its text, cut; shown, not used. */
export interface Unreadable {
  unreadable: string;
}

/** A field of an event: its value; Unreadable when the store holds something else; undefined when it has none. */
export type Field<T> = T | Unreadable | undefined;

/** The value of `field`, or undefined when it has none or it is unreadable. */
export function known<T>(field: Field<T>): T | undefined {
  return isUnreadable(field) ? undefined : field;
}

export function isUnreadable(field: unknown): field is Unreadable {
  return typeof field === 'object' && field !== null && 'unreadable' in field;
}

/** What every event has: when, where in the backend's history, who, and what else the store held. */
interface EventBase {
  /** Server time (ms); undefined when the backend's record of it holds no date (a forged one). */
  atMs: number | undefined;
  /**
   * The backend's own position of this event in its history, as it gives it (the Redis backend: the
   * stream entry's ID, "ms-seq"). Shown by `dlock history --json` as `id`; dlock reads nothing from it.
   */
  position: string;
  /** The holder's or waiter's host, pid and command, as its dlock gave them. */
  host?: string;
  pid?: Field<number>;
  cmd?: string;
  /** Who (the OS user name), when recorded: the holder's (acquired, released, forced), the waiter's. */
  user?: string;
  /** Fields the store holds that this event does not have (a forged history; another dlock's): name → text, cut. */
  extra: Record<string, string>;
}

/** A lock without slots has `slot: null`. */
type Slot = Field<number | null>;

/** Taken: its fencing token, its slot, how long it waited. */
export interface AcquiredEvent extends EventBase {
  event: 'acquired';
  waitedMs?: Field<number>;
  fence?: Field<string>;
  slot?: Slot;
  /** --reason, when given. */
  reason?: string;
  /** Taken by `dlock hold`; `untilMs` its end (server ms), null when it lasts until `dlock unhold`. */
  hold?: Field<boolean>;
  untilMs?: Field<number | null>;
}

/**
 * Released: how the run ended (`exit` 0 … 255; 'lost': the lock was lost while it ran; 'unknown':
 * released by token with no status; 'none': no command ran), how long it was held, and for a job
 * dlock stopped, why (`reason`) and the command's own status (`commandExit`).
 */
export interface ReleasedEvent extends EventBase {
  event: 'released';
  fence?: Field<string>;
  slot?: Slot;
  exit?: Field<number | 'lost' | 'unknown' | 'none'>;
  heldMs?: Field<number>;
  reason?: Field<StopReason>;
  commandExit?: Field<number>;
  /** `dlock unhold`: who ended the hold. */
  byUser?: string;
  byHost?: string;
}

/** Why dlock ended a job: --max-hold, or a --heartbeat missed. */
export type StopReason = 'max-hold' | 'heartbeat-missed';

/** Lost: a renewal refused, because the lease expired, a release --force, or another took the lock. */
export interface LostEvent extends EventBase {
  event: 'lost';
  fence?: Field<string>;
  why?: Field<'expired' | 'forced' | 'taken'>;
}

/** Forced: release --force removed this holder (`now`: with --now); `byHost`, `byPid`: who ran it. */
export interface ForcedEvent extends EventBase {
  event: 'forced';
  fence?: Field<string>;
  slot?: Slot;
  byHost?: string;
  byPid?: Field<number>;
  /** `dlock unhold --force`: the user who took the hold away (a steal). */
  byUser?: string;
  now?: Field<boolean>;
}

/** Turned away: held or others in line (-n), or its --wait ran out (`why: 'wait'`). */
export interface BusyEvent extends EventBase {
  event: 'busy';
  waitedMs?: Field<number>;
  why?: Field<'held' | 'line' | 'wait'>;
}

/** Turned away by --once-per: a run succeeded in this window, which ends at `untilMs` (server time). */
export interface DoneEvent extends EventBase {
  event: 'done';
  waitedMs?: Field<number>;
  untilMs?: Field<number>;
}

/** A waiter a newer --supersede waiter took the place of in line (`byHost`, `byPid`, `byCmd`: that waiter). */
export interface SupersededEvent extends EventBase {
  event: 'superseded';
  waitedMs?: Field<number>;
  byHost?: string;
  byPid?: Field<number>;
  byCmd?: string;
}

/** A waiter interrupted while in line. */
export interface LeftEvent extends EventBase {
  event: 'left';
  waitedMs?: Field<number>;
  why?: Field<'wait'>;
}

/** An event dlock does not write (a forged history, a newer dlock's): `name` is its word, cut ("" when it has none). */
export interface OtherEvent extends EventBase {
  event: 'other';
  name: string;
}

/** One event of a key's history. */
export type HistoryEvent =
  | AcquiredEvent
  | ReleasedEvent
  | LostEvent
  | ForcedEvent
  | BusyEvent
  | DoneEvent
  | SupersededEvent
  | LeftEvent
  | OtherEvent;

/** The event's word, as `dlock history` shows it. */
export function eventName(event: HistoryEvent): string {
  return event.event === 'other' ? event.name : event.event;
}
