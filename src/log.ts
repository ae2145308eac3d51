// stderr: errors, warnings and lock events, as "dlock: " text lines or as one JSON object per
// line (--log-format json). In json mode nothing else is written to stderr.

import type { LogFormat, Verbosity } from './config/index.js';
import { stderr, type Output } from './output.js';
import { epochMs } from './clock.js';
import { joinLines, printable, toJson } from './untrusted.js';

export type LockEvent =
  | 'waiting'
  | 'wait-status'
  | 'acquired'
  | 'renewed'
  | 'renew-failed'
  | 'lost'
  | 'signal'
  | 'background'
  | 'released'
  | 'release-failed'
  | 'force-released'
  | 'degraded'
  | 'outage'
  | 'restored'
  | 'retaken'
  | 'stalled'
  | 'poll-only'
  | 'max-hold'
  | 'heartbeat-missed';

/** error: always shown; warn: hidden by --quiet; info: --verbose text, or json without --quiet. */
export type Level = 'info' | 'warn' | 'error';

export type Fields = Record<string, unknown>;

export interface EventFields extends Fields {
  key: string;
  fence?: string;
  waited_ms?: number;
}

/** Lock events that are warnings (or say one no longer applies): a normal (not --verbose) text log still shows them. */
const WARNINGS: ReadonlySet<LockEvent> = new Set([
  'renew-failed',
  'lost',
  'release-failed',
  'degraded',
  'outage',
  'restored',
  'retaken',
  'stalled',
  'poll-only',
  'max-hold',
  'heartbeat-missed',
]);

/** How a lock event is logged unless its caller says otherwise. */
export function eventLevel(event: LockEvent): Level {
  return WARNINGS.has(event) ? 'warn' : 'info';
}

/**
 * Who else sees each lock event besides stderr (--ping, --on-event: ../monitor/). Registered only
 * when asked for, so a plain run pays one empty-array check per event.
 */
export interface EventSink {
  /** A lock event as its JSON line has it (ts, ts_ms, event, key, ...): also with --quiet. */
  seen(record: Fields): void;
  /** dlock is about to exit with `exitCode`: send what is left, waiting at most the sink's bound. */
  finish(exitCode: number): Promise<void>;
}

const sinks: EventSink[] = [];

/** Every lock event from now on (of every Logger but a copy's) goes to `sink` too. */
export function addEventSink(sink: EventSink): void {
  sinks.push(sink);
}

/**
 * An event for the sinks only: one that is not printed (the busy error with -E 0). Every event
 * that names a key is a lock event; dlock's other lines (a ping's own warning) are not.
 */
export function tellEventSinks(fields: Fields, stamp: { ts: string; ts_ms: number } = timestamp()): void {
  if (sinks.length === 0 || typeof fields.key !== 'string') return;
  const record = { ...stamp, ...wholeMs(fields) };
  for (const sink of sinks) sink.seen(record);
}

/** Before exiting: let each sink send what is left, each within its bound. */
export async function finishEventSinks(exitCode: number): Promise<void> {
  await Promise.all(sinks.map((sink) => sink.finish(exitCode)));
}

/**
 * `fields` with every `*_ms` number rounded to a whole millisecond, at any depth (a holder's
 * ttl_left_ms): events say 7, not 6.98127399943769 (json-schema.json types them integer). ts_ms,
 * the event's own time, keeps its fraction and is added after.
 */
function wholeMs<T>(fields: T): T {
  if (Array.isArray(fields)) return fields.map(wholeMs) as T;
  if (fields === null || typeof fields !== 'object' || Object.getPrototypeOf(fields) !== Object.prototype)
    return fields;
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(fields))
    out[name] = name.endsWith('_ms') && typeof value === 'number' ? Math.round(value) : wholeMs(value);
  return out as T;
}

function timestamp(): { ts: string; ts_ms: number } {
  const ts = epochMs();
  return { ts: new Date(ts).toISOString(), ts_ms: Math.round(ts * 1000) / 1000 };
}

export class Logger {
  constructor(
    readonly verbosity: Verbosity,
    readonly format: LogFormat,
    private readonly out: Output = stderr,
    /** false: a second copy of another Logger's lines (the keeper's file), not told to the sinks again. */
    private readonly toSinks = true,
  ) {}

  /** An error: one "dlock: " line, or an "error" event (fields.event names another, e.g. "busy"). */
  error(message: string, fields: Fields = {}): void {
    this.emit('error', message, { event: 'error', ...fields });
  }

  /** A warning that is not a lock event: a "warning" event in json mode (or fields.event). */
  warn(message: string, fields: Fields = {}): void {
    this.emit('warn', message, { event: 'warning', ...fields });
  }

  /** A note shown with --verbose (text) or as an event named by fields.event (json, unless --quiet). */
  info(message: string, fields: Fields = {}): void {
    this.emit('info', message, { event: 'info', ...fields });
  }

  event(event: LockEvent, fields: EventFields, text: string, level: Level = eventLevel(event)): void {
    this.emit(level, text, { event, ...fields });
  }

  private emit(level: Level, text: string, given: Fields): void {
    const fields = wholeMs(given);
    const message = level === 'info' ? {} : { message: oneLine(text) };
    // One time for the event: a hook (--on-event) gets the very event stderr shows.
    const stamp = timestamp();
    if (this.toSinks) tellEventSinks({ ...fields, ...message }, stamp);
    if (level !== 'error' && this.verbosity === 'quiet') return;
    if (this.format === 'json') {
      this.out.write(`${toJson({ ...stamp, ...fields, ...message })}\n`);
    } else if (level !== 'info' || this.verbosity === 'verbose') {
      this.out.write(`dlock: ${oneLine(text)}\n`);
    }
  }
}

/**
 * One line, nothing raw left: messages are built with every untrusted part escaped already
 * (a forged holder's newline must not become a space here); this catches what was not, such
 * as a server's error text.
 */
function oneLine(text: string): string {
  return printable(joinLines(text));
}
