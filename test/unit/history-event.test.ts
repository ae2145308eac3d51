// The Redis backend's history stream entries as the face's typed events (src/backend/history.ts):
// every field anyone who can write to Redis could forge is checked or kept only as text to show.

import { expect, test } from 'vitest';
import { historyEvent } from '../../src/backends/redis/lock/history.js';
import { parseHistoryReply } from '../../src/backends/redis/lock/replies.js';
import type { HistoryEvent } from '../../src/backend/history.js';

/** The events of an XREVRANGE reply: [id, [name, value, …]] per entry. */
function events(...entries: [string, string[]][]): HistoryEvent[] {
  return parseHistoryReply(entries).map(historyEvent);
}

test('what dlock writes becomes typed fields in dlock words', () => {
  const [acquired, released, forced, lost, busy, done, left] = events(
    [
      '1700000000000-0',
      ['event', 'acquired', 'host', 'h', 'pid', '42', 'cmd', 'true', 'waited_ms', '250', 'fence', '7', 'slot', '-1'],
    ],
    [
      '1700000000001-0',
      [
        'event',
        'released',
        'host',
        'h',
        'pid',
        '42',
        'cmd',
        'true',
        'fence',
        '7',
        'slot',
        '2',
        'exit',
        '124',
        'held_ms',
        '900',
        'reason',
        'max-hold',
        'command_exit',
        '143',
      ],
    ],
    [
      '1700000000002-0',
      [
        'event',
        'forced',
        'host',
        'h',
        'pid',
        '42',
        'cmd',
        'x',
        'fence',
        '7',
        'slot',
        '-1',
        'by_host',
        'b',
        'by_pid',
        '9',
        'now',
        'true',
      ],
    ],
    ['1700000000003-0', ['event', 'lost', 'host', 'h', 'pid', '42', 'cmd', 'x', 'fence', '7', 'why', 'forced']],
    ['1700000000004-0', ['event', 'busy', 'host', 'h', 'pid', '42', 'cmd', 'x', 'waited_ms', '300', 'why', 'wait']],
    [
      '1700000000005-0',
      ['event', 'done', 'host', 'h', 'pid', '42', 'cmd', 'x', 'waited_ms', '0', 'until_ms', '1700000060000'],
    ],
    ['1700000000006-0', ['event', 'left', 'host', 'h', 'pid', '42', 'cmd', 'x', 'waited_ms', '12', 'why', 'wait']],
  );
  const who = { host: 'h', pid: 42, extra: {} };
  expect(acquired).toEqual({
    ...who,
    event: 'acquired',
    atMs: 1_700_000_000_000,
    position: '1700000000000-0',
    cmd: 'true',
    waitedMs: 250,
    fence: '7',
    slot: null,
  });
  expect(released).toMatchObject({
    event: 'released',
    slot: 2,
    exit: 124,
    heldMs: 900,
    reason: 'max-hold',
    commandExit: 143,
  });
  expect(forced).toMatchObject({ event: 'forced', byHost: 'b', byPid: 9, now: true, slot: null });
  expect(lost).toMatchObject({ event: 'lost', fence: '7', why: 'forced' });
  expect(busy).toMatchObject({ event: 'busy', waitedMs: 300, why: 'wait' });
  expect(done).toMatchObject({ event: 'done', waitedMs: 0, untilMs: 1_700_000_060_000 });
  expect(left).toMatchObject({ event: 'left', waitedMs: 12, why: 'wait', atMs: 1_700_000_000_006 });
});

test('exit: a status, lost, unknown, none (no command), or unreadable', () => {
  const exits = ['0', 'lost', 'unknown', '', '256', '\x1b[2J'].map(
    (exit) => events(['1-0', ['event', 'released', 'exit', exit]])[0],
  );
  expect(exits.map((event) => (event.event === 'released' ? event.exit : 'not released'))).toEqual([
    0,
    'lost',
    'unknown',
    'none',
    { unreadable: '256' },
    { unreadable: '\x1b[2J' },
  ]);
});

test('forged fields: numbers that are not, a huge slot, unknown words, all kept only as text', () => {
  const [released, forced, busy] = events(
    [
      '1-0',
      [
        'event',
        'released',
        'held_ms',
        '1e300',
        'pid',
        'abc',
        'slot',
        '99999999999',
        'command_exit',
        '-1',
        'reason',
        'evil',
      ],
    ],
    ['2-0', ['event', 'forced', 'now', 'maybe', 'by_pid', '0']],
    ['3-0', ['event', 'busy', 'waited_ms', 'NaN', 'why', 'bored']],
  );
  expect(released).toMatchObject({
    heldMs: { unreadable: '1e300' },
    pid: { unreadable: 'abc' },
    slot: { unreadable: '99999999999' },
    commandExit: { unreadable: '-1' },
    reason: { unreadable: 'evil' },
  });
  expect(forced).toMatchObject({ now: { unreadable: 'maybe' }, byPid: { unreadable: '0' } });
  expect(busy).toMatchObject({ waitedMs: { unreadable: 'NaN' }, why: { unreadable: 'bored' } });
});

test('missing fields are absent; an ID past any date has no time; unknown fields are extras, cut', () => {
  const [bare, future, extras] = events(
    ['5-0', ['event', 'released']],
    ['9000000000000000-1', ['event', 'acquired']],
    ['6-0', ['event', 'acquired', 'id', 'y', 'held_ms', '5', 'x'.repeat(100), 'v'.repeat(1000)]],
  );
  expect(bare).toEqual({ event: 'released', atMs: 5, position: '5-0', extra: {} });
  expect(future).toMatchObject({ event: 'acquired', atMs: undefined, position: '9000000000000000-1' });
  // held_ms is no field of an acquisition: kept as the store holds it.
  expect(extras.extra).toEqual({
    id: 'y',
    held_ms: '5',
    ['x'.repeat(64) + '…(36 more)']: 'v'.repeat(256) + '…(744 more)',
  });
});

test('an event dlock does not write, or none at all: "other", its word kept; only who it names is read', () => {
  const [unknown, none] = events(
    ['1-0', ['event', 'forced\nfake_metric 1', 'host', 'h', 'pid', '5', 'held_ms', '7']],
    ['2-0', ['host', 'h']],
  );
  expect(unknown).toEqual({
    event: 'other',
    name: 'forced\nfake_metric 1',
    atMs: 1,
    position: '1-0',
    host: 'h',
    pid: 5,
    extra: { held_ms: '7' },
  });
  expect(none).toMatchObject({ event: 'other', name: '', host: 'h' });
});
