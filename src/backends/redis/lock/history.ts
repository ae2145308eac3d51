// Read a key's history stream (scripts.ts HISTORY): the newest entries first, as the face's typed
// events. Appending is done by the scripts themselves, in the same call as the work.

import type { Instance } from '../client/client.js';
import { withTimeout } from '../../../clock.js';
import { isWrongValue, wrongValueError } from './foreign.js';
import type { LockKeys } from './keys.js';
import { isFence, parseHistoryReply, type StreamEntry } from './replies.js';
import type { Field, HistoryEvent } from '../../../backend/history.js';
import { parseCount } from '../../../untrusted.js';

/** The newest `count` events, newest first (XREVRANGE … COUNT). */
export async function readHistory(
  instance: Instance,
  keys: LockKeys,
  count: number,
  timeoutMs: number,
): Promise<HistoryEvent[]> {
  const newest = instance.client.call('XREVRANGE', keys.history, '+', '-', 'COUNT', String(count));
  const read = newest.catch(async (error: unknown) => {
    // A key of another type where the history belongs: name it (foreign.ts), as the scripts do.
    throw isWrongValue(error) ? await wrongValueError(instance.client, [keys.history], error) : error;
  });
  return parseHistoryReply(await withTimeout(read, timeoutMs)).map(historyEvent);
}

const MS_MAX = 8.64e15;

/** `{ [name]: text }`, or nothing when the entry has no such field (or an empty one). */
function optionalText<K extends string>(name: K, text: string | undefined): { [P in K]?: string } {
  return text === undefined || text === '' ? {} : ({ [name]: text } as { [P in K]?: string });
}
const PID_MAX = 2 ** 31 - 1;

/**
 * One stream entry as an event: its ID's time and the fields the Lua writes for its `event`
 * (scripts.ts HISTORY), each checked (a number is a decimal in its range, a word one dlock
 * writes; anything else is kept as Unreadable text); fields the event does not have are extras.
 */
export function historyEvent({ id, fields }: StreamEntry): HistoryEvent {
  const rest: Record<string, string> = Object.create(null);
  for (const name of Object.keys(fields)) if (name !== 'event') rest[name] = fields[name];
  const take = (name: string): string | undefined => {
    const value = rest[name];
    delete rest[name];
    return value;
  };
  const read = <T>(name: string, parse: (text: string) => T | undefined): Field<T> => {
    const text = take(name);
    if (text === undefined) return undefined;
    const value = parse(text);
    return value === undefined ? { unreadable: text } : value;
  };
  const count = (name: string, min: number, max: number) => read(name, (text) => parseCount(text, min, max));
  const word =
    <T extends string>(...words: T[]) =>
    (text: string) =>
      words.find((known) => known === text);
  const ms = (name: string) => count(name, 0, MS_MAX);
  const fence = () => read('fence', (text) => (isFence(text) ? text : undefined));
  // -1: a lock without slots.
  const slot = () => read('slot', (text) => (text === '-1' ? null : parseCount(text, 0, PID_MAX)));

  const base = {
    atMs: parseCount(id.split('-')[0], 0, MS_MAX),
    position: id,
    host: take('host'),
    pid: count('pid', 1, PID_MAX),
    cmd: take('cmd'),
    ...optionalText('user', take('user')),
    extra: rest,
  };
  const event = fields.event ?? '';
  switch (event) {
    case 'acquired':
      return {
        ...base,
        event,
        waitedMs: ms('waited_ms'),
        fence: fence(),
        slot: slot(),
        ...optionalText('reason', take('reason')),
        hold: read('hold', (text) => (text === '1' ? true : undefined)),
        untilMs: read('until_ms', (text) => (text === '' ? null : parseCount(text, 0, MS_MAX))),
      };
    case 'released':
      return {
        ...base,
        event,
        fence: fence(),
        slot: slot(),
        exit: read('exit', (text) =>
          text === '' ? 'none' : (word('lost', 'unknown')(text) ?? parseCount(text, 0, 255)),
        ),
        heldMs: ms('held_ms'),
        reason: read('reason', word('max-hold', 'heartbeat-missed')),
        commandExit: count('command_exit', 0, 255),
        ...optionalText('byUser', take('by_user')),
        ...optionalText('byHost', take('by_host')),
      };
    case 'lost':
      return { ...base, event, fence: fence(), why: read('why', word('expired', 'forced', 'taken')) };
    case 'forced':
      return {
        ...base,
        event,
        fence: fence(),
        slot: slot(),
        byHost: take('by_host'),
        byPid: count('by_pid', 1, PID_MAX),
        ...optionalText('byUser', take('by_user')),
        now: read('now', (text) => (text === 'true' ? true : text === 'false' ? false : undefined)),
      };
    case 'busy':
      return { ...base, event, waitedMs: ms('waited_ms'), why: read('why', word('held', 'line', 'wait')) };
    case 'done':
      return { ...base, event, waitedMs: ms('waited_ms'), untilMs: ms('until_ms') };
    case 'superseded':
      return {
        ...base,
        event,
        waitedMs: ms('waited_ms'),
        byHost: take('by_host'),
        byPid: count('by_pid', 1, PID_MAX),
        byCmd: take('by_cmd'),
      };
    case 'left':
      return { ...base, event, waitedMs: ms('waited_ms'), why: read('why', word('wait')) };
    default:
      return { ...base, event: 'other', name: event };
  }
}
