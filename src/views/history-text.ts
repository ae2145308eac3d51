// dlock history as text (a table, newest first) and as JSON. Every field came from a stream
// anyone who can write to Redis could forge: cut when read, escaped here.

import { formatDuration } from '../duration.js';
import {
  eventName,
  isUnreadable,
  known,
  type Field,
  type HistoryEvent,
  type ReleasedEvent,
  type StopReason,
} from '../backend/index.js';
import { printable } from '../untrusted.js';

/** The table: time (server, UTC), event, host, pid, what happened, command. */
export function historyTable(events: HistoryEvent[]): string {
  const rows = [['TIME (SERVER, UTC)', 'EVENT', 'HOST', 'PID', 'DETAILS', 'COMMAND']];
  for (const event of events) {
    const { host = '', cmd = '' } = event;
    const row = [timeText(event.atMs), eventName(event), host, textOf(event.pid) ?? '', details(event), cmd];
    rows.push(row.map(printable));
  }
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  return (
    rows
      .map((row) =>
        row
          .map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column])))
          .join('  ')
          .trimEnd(),
      )
      .join('\n') + '\n'
  );
}

/** A field as the table shows it: its value, or what the store held there when that is none of dlock's. */
function textOf(field: Field<string | number | boolean>): string | undefined {
  return field === undefined ? undefined : isUnreadable(field) ? field.unreadable : String(field);
}

/** What one event says besides who: fence, slot, exit status, times, why. */
export function details(event: HistoryEvent): string {
  const ms = (field: Field<number>) => {
    const value = known(field);
    return value === undefined ? '?' : formatDuration(value);
  };
  const fenceText = (fence: Field<string>) => {
    const text = textOf(fence);
    return text ? `fence ${text}` : '';
  };
  const slotText = (slot: Field<number | null>) => (slot === undefined || slot === null ? '' : `slot ${textOf(slot)}`);
  const parts: string[] = [];
  switch (event.event) {
    case 'acquired': {
      parts.push(fenceText(event.fence), slotText(event.slot), `waited ${ms(event.waitedMs)}`);
      if (event.hold === true) {
        const until = known(event.untilMs);
        parts.push(`hold until ${until === null ? 'dlock unhold' : timeText(until)}`);
      }
      if (event.reason !== undefined) parts.push(`reason '${event.reason}'`);
      if (event.user !== undefined) parts.push(`user ${event.user}`);
      break;
    }
    case 'released':
      parts.push(exitText(event), `held ${ms(event.heldMs)}`, fenceText(event.fence), slotText(event.slot));
      if (event.byUser !== undefined) parts.push(`unhold by ${event.byUser}@${event.byHost ?? '?'}`);
      break;
    case 'lost':
      parts.push(`${textOf(event.why) ?? '?'} (renewal refused)`, fenceText(event.fence));
      break;
    case 'forced': {
      const by =
        event.byUser !== undefined
          ? `by ${event.byUser}@${event.byHost ?? '?'} (unhold --force)`
          : `by ${event.byHost ?? '?'} pid ${textOf(event.byPid) ?? '?'}${event.now === true ? ' (--now)' : ''}`;
      parts.push(by, fenceText(event.fence), slotText(event.slot));
      break;
    }
    case 'busy':
      parts.push(
        event.why === 'wait'
          ? `wait ran out after ${ms(event.waitedMs)}`
          : event.why === 'line'
            ? 'others in line (-n)'
            : 'held (-n)',
      );
      break;
    case 'done':
      parts.push(`done until ${timeText(known(event.untilMs))}`);
      break;
    case 'superseded':
      parts.push(
        `superseded after ${ms(event.waitedMs)} by ${event.byHost || '?'} pid ${textOf(event.byPid) ?? '?'}` +
          (event.byCmd ? ` (${event.byCmd})` : ''),
      );
      break;
    case 'left':
      parts.push(`interrupted after ${ms(event.waitedMs)}`);
      break;
  }
  return parts.filter(Boolean).join(', ');
}

/**
 * "exit 0", "exit lost", "no command"; for a job dlock stopped, which status is which: "exit 124
 * (stopped by --max-hold; the command ended 143)" (dlock's outcome, then the command's own).
 */
function exitText(event: ReleasedEvent): string {
  const { exit: status } = event;
  const exit =
    status === undefined || status === 'none'
      ? 'no command'
      : status === 'lost'
        ? 'exit lost'
        : `exit ${textOf(status)}`;
  const { reason } = event;
  if (reason === undefined || !textOf(reason)) return exit;
  const by = isUnreadable(reason) ? `dlock (${reason.unreadable})` : STOPPED_BY[reason];
  const own =
    event.commandExit !== undefined
      ? `the command ended ${textOf(event.commandExit)}`
      : // A keeper is not its shell's parent: the shell's status (143 after SIGTERM, unless a trap chose) is not seen.
        "the shell's own status is not known here";
  return `${exit} (stopped by ${by}; ${own})`;
}

/** The history's `reason` as the option that stopped the job. */
const STOPPED_BY: Record<StopReason, string> = { 'max-hold': '--max-hold', 'heartbeat-missed': '--heartbeat' };

/** A time as ISO text, "?" when unknown. */
function timeText(ms: number | undefined): string {
  return ms === undefined ? '?' : new Date(ms).toISOString();
}

/**
 * One JSON object per event: `id` (the backend's position: for Redis the stream ID), `time` (ISO,
 * server; null when it holds no date), `time_ms`, `event`, then its fields in the order dlock
 * writes them and what else the store held (`extra`); a stored field never takes the place of those four.
 */
export function historyJson(events: HistoryEvent[]): object[] {
  return events.map((event) => {
    const time = event.atMs === undefined ? null : new Date(event.atMs).toISOString();
    const own = { id: event.position, time, time_ms: event.atMs ?? null, event: eventName(event) };
    const fields = event as unknown as Partial<Record<FieldName, AnyField>>;
    const typed = JSON_FIELDS.flatMap(([name, jsonName, shown]) =>
      fields[name] === undefined ? [] : [[jsonName, shown(fields[name])] as const],
    );
    const stored = [...typed, ...Object.entries(event.extra)].filter(([name]) => !Object.hasOwn(own, name));
    const result: Record<string, JsonValue> = { ...own, ...Object.fromEntries(stored) };
    if (event.event === 'released' && event.exit === 'lost') result.lost = true;
    return result;
  });
}

/** Every field name of any event. */
type FieldName = Exclude<
  HistoryEvent extends infer E ? (E extends HistoryEvent ? keyof E : never) : never,
  'event' | 'name' | 'atMs' | 'position' | 'extra'
>;
type AnyField = Field<string | number | boolean | null>;
type JsonValue = string | number | boolean | null;

/** Numbers as numbers (docs/reference/json-schema.json): null when unreadable; `slot` null for a lock without slots. */
const number = (field: AnyField): JsonValue => (typeof field === 'number' ? field : null);
/** true, or the text stored where dlock writes "1". */
const flag = (field: AnyField): JsonValue => (field === true ? true : text(field));
/** Text as stored: the 64-bit fence stays a string, `now` is "true" or "false". */
const text = (field: AnyField): JsonValue => (isUnreadable(field) ? field.unreadable : String(field));

/**
 * The typed fields as --json names them, in the order dlock writes them. `exit` is a number, or
 * null when no status is known (with `lost: true` when the lock was lost while the command ran).
 */
const JSON_FIELDS: [FieldName, string, (field: AnyField) => JsonValue][] = [
  ['host', 'host', text],
  ['pid', 'pid', number],
  ['cmd', 'cmd', text],
  ['user', 'user', text],
  ['waitedMs', 'waited_ms', number],
  ['fence', 'fence', text],
  ['slot', 'slot', number],
  ['exit', 'exit', number],
  ['heldMs', 'held_ms', number],
  ['reason', 'reason', text],
  ['commandExit', 'command_exit', number],
  ['byHost', 'by_host', text],
  ['byPid', 'by_pid', number],
  ['byCmd', 'by_cmd', text],
  ['byUser', 'by_user', text],
  ['hold', 'hold', flag],
  ['now', 'now', text],
  ['why', 'why', text],
  ['untilMs', 'until_ms', number],
];
