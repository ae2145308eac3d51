// dlock history as text (a table, newest first) and as JSON. Every field came from a stream
// anyone who can write to Redis could forge: cut when read, escaped here.

import { formatDuration } from '../duration.js';
import type { HistoryEntry } from '../backend/index.js';
import { exitFields, parseCount, printable } from '../untrusted.js';

/** The table: time (server, UTC), event, host, pid, what happened, command. */
export function historyTable(entries: HistoryEntry[]): string {
  const rows = [['TIME (SERVER, UTC)', 'EVENT', 'HOST', 'PID', 'DETAILS', 'COMMAND']];
  for (const entry of entries) {
    const { host = '', pid = '', cmd = '' } = entry.fields;
    rows.push([timeText(entry.ms), entry.event, host, pid, details(entry), cmd].map(printable));
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

/** What one event says besides who: fence, slot, exit status, times, why. */
export function details(entry: HistoryEntry): string {
  const f = entry.fields;
  const ms = (name: string) => {
    const value = parseCount(f[name], 0, 8.64e15);
    return value === undefined ? '?' : formatDuration(value);
  };
  const fence = f.fence ? `fence ${f.fence}` : '';
  const slot = f.slot !== undefined && f.slot !== '-1' ? `slot ${f.slot}` : '';
  const parts: string[] = [];
  switch (entry.event) {
    case 'acquired':
      parts.push(fence, slot, `waited ${ms('waited_ms')}`);
      break;
    case 'released':
      parts.push(exitText(f), `held ${ms('held_ms')}`, fence, slot);
      break;
    case 'lost':
      parts.push(`${f.why ?? '?'} (renewal refused)`, fence);
      break;
    case 'forced':
      parts.push(`by ${f.by_host ?? '?'} pid ${f.by_pid ?? '?'}${f.now === 'true' ? ' (--now)' : ''}`, fence, slot);
      break;
    case 'busy':
      parts.push(
        f.why === 'wait'
          ? `wait ran out after ${ms('waited_ms')}`
          : f.why === 'line'
            ? 'others in line (-n)'
            : 'held (-n)',
      );
      break;
    case 'done':
      parts.push(`done until ${untilText(f.until_ms)}`);
      break;
    case 'left':
      parts.push(`interrupted after ${ms('waited_ms')}`);
      break;
  }
  return parts.filter(Boolean).join(', ');
}

/**
 * "exit 0", "exit lost", "no command"; for a job dlock stopped, which status is which: "exit 124
 * (stopped by --max-hold; the command ended 143)" (dlock's outcome, then the command's own).
 */
function exitText(f: Record<string, string | undefined>): string {
  const exit =
    f.exit === '' || f.exit === undefined ? 'no command' : f.exit === 'lost' ? 'exit lost' : `exit ${f.exit}`;
  if (!f.reason) return exit;
  const by = STOPPED_BY[f.reason] ?? `dlock (${f.reason})`;
  const own =
    f.command_exit !== undefined
      ? `the command ended ${f.command_exit}`
      : // A keeper is not its shell's parent: the shell's status (143 after SIGTERM, unless a trap chose) is not seen.
        "the shell's own status is not known here";
  return `${exit} (stopped by ${by}; ${own})`;
}

/** The history's `reason` as the option that stopped the job. */
const STOPPED_BY: Record<string, string> = { 'max-hold': '--max-hold', 'heartbeat-missed': '--heartbeat' };

function untilText(value: string | undefined): string {
  return timeText(parseCount(value, 0, 8.64e15));
}

/** A time as ISO text, "?" when unknown. */
function timeText(ms: number | undefined): string {
  return ms === undefined ? '?' : new Date(ms).toISOString();
}

/**
 * One JSON object per entry: `time` (ISO, server; null when the ID holds no date), `time_ms`,
 * `event`, then its other fields, numbers as numbers; a stored field never takes the place of those four.
 */
export function historyJson(entries: HistoryEntry[]): object[] {
  return entries.map((entry) => {
    const time = entry.ms === undefined ? null : new Date(entry.ms).toISOString();
    const own = { id: entry.id, time, time_ms: entry.ms ?? null, event: entry.event };
    const stored = Object.entries(numbered(entry.fields)).filter(([name]) => !Object.hasOwn(own, name));
    return { ...own, ...Object.fromEntries(stored) };
  });
}

/** Fields that hold numbers, with the range a true one has; anything else there is null. */
const NUMERIC_FIELDS: Record<string, [number, number]> = {
  pid: [1, 2 ** 31 - 1],
  by_pid: [1, 2 ** 31 - 1],
  waited_ms: [0, 8.64e15],
  held_ms: [0, 8.64e15],
  until_ms: [0, 8.64e15],
  command_exit: [0, 255],
};

/**
 * The stored fields with the types of docs/reference/json-schema.json (the stream stores strings):
 * pids and times as numbers, as status gives them; `slot` a number, null for a lock without slots
 * (stored -1); `exit` a number, or null with `lost: true` or when no status is known; the 64-bit
 * fence stays a string.
 */
function numbered(fields: Record<string, string>): Record<string, string | number | boolean | null> {
  const result: Record<string, string | number | boolean | null> = { ...fields };
  for (const [name, [min, max]] of Object.entries(NUMERIC_FIELDS)) {
    if (Object.hasOwn(fields, name)) result[name] = parseCount(fields[name], min, max) ?? null;
  }
  if (Object.hasOwn(fields, 'slot')) result.slot = parseCount(fields.slot, 0, 2 ** 31 - 1) ?? null;
  if (Object.hasOwn(fields, 'exit')) Object.assign(result, exitFields(fields.exit));
  return result;
}
