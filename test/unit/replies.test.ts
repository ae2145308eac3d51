// Every script reply and every reply ioredis acts on, checked by pure functions: table tests
// (no server). A reply of the wrong shape throws MalformedReplyError; nothing of it is used.

import { describe, expect, test } from 'vitest';
import {
  isFence,
  MAX_FENCE,
  parseAcquireReply,
  parseEnterReply,
  parseFlagReply,
  parseForceReleaseReply,
  parseInspectReply,
  parseScanReply,
  shape,
} from '../../src/backends/redis/lock/replies.js';
import type { HoldMode } from '../../src/backend/mode.js';
import { describeError, describeFailure, MalformedReplyError } from '../../src/backends/redis/client/describe.js';
import { checkClientReply, checkPushReply } from '../../src/backends/redis/client/reply-shapes.js';

/** The reply's error reason, or "ok" when it was accepted. */
function verdict(parse: () => unknown): string {
  try {
    parse();
    return 'ok';
  } catch (error) {
    expect(error).toBeInstanceOf(MalformedReplyError);
    return (error as MalformedReplyError).reason;
  }
}

const deep = (depth: number) => {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
};

describe('isFence: a decimal integer from 1 to 2^63-1, as INCR makes them', () => {
  test.each([
    ['1', true],
    ['42', true],
    [MAX_FENCE, true],
    ['9223372036854775808', false],
    ['99999999999999999999', false],
    ['0', false],
    ['007', false],
    ['-1', false],
    ['+1', false],
    ['1e5', false],
    ['12\n', false],
    ['12\0', false],
    [' 12', false],
    ['０１', false],
    ['', false],
    [12, false],
    [null, false],
  ])('%j → %s', (value, ok) => {
    expect(isFence(value)).toBe(ok);
  });
});

describe('ACQUIRE: {1, fence} | {0, pttl, owner}', () => {
  test.each([
    [[1, '7'], 'ok'],
    [[0, 1500, 'abc'], 'ok'],
    [[0, -1, ''], 'ok'],
    ['ok', 'with "ok" (expected {1, fence} or {0, ttl, owner})'],
    [null, 'with nil'],
    [[], 'with an empty array'],
    [[2, '7'], 'with an array of 2 (integer, string)'],
    [[1, 7], 'a fencing token of the integer 7'],
    [[1, '-7'], 'a fencing token of "-7"'],
    [[1, 'abc\u001b[2J'], 'a fencing token of "abc\\x1b[2J"'],
    [[1, '99999999999999999999999'], 'a fencing token of "99999999999999999999999"'],
    [[1, 'x'.repeat(5000)], 'a fencing token of a string of 5000 bytes'],
    [[1, '7', 'extra'], 'with an array of 3'],
    [[0, -5, 'x'], 'with an array of 3 (integer, integer, string)'],
    [[0, 1.5, 'x'], 'with an array of 3'],
    [[0, 100, ['x']], 'with an array of 3 (integer, integer, array)'],
    [[0, 100, 'x'.repeat(5000)], 'ok'],
  ])('%j → %s', (reply, expected) => {
    const reason = verdict(() => parseAcquireReply(reply));
    if (expected === 'ok') expect(reason).toBe('ok');
    else expect(reason).toContain(expected);
  });

  test('100 000 nested arrays: refused without recursing', () => {
    expect(verdict(() => parseAcquireReply(deep(100_000)))).toContain('with an array of 1 (array)');
  });

  test('a good reply is used as it is', () => {
    expect(parseAcquireReply([1, MAX_FENCE])).toEqual({ acquired: true, fence: MAX_FENCE });
    expect(parseAcquireReply([0, 250, 'owner'])).toEqual({ acquired: false, pttlMs: 250, owner: 'owner' });
  });
});

describe('EXTEND, RELEASE, RAISE_FENCE: 0 or 1', () => {
  test.each([
    [1, 'ok'],
    [0, 'ok'],
    [2, 'the integer 2'],
    [-1, 'the integer -1'],
    ['1', '"1"'],
    [null, 'nil'],
    [[1], 'an array of 1'],
  ])('%j → %s', (reply, expected) => {
    const reason = verdict(() => parseFlagReply('extend', reply));
    expect(reason).toContain(expected);
  });
});

describe('ENTER: {1, fence, slot} | {0, place, ms} | {2, mode, n, holders, waiters}', () => {
  const alone: HoldMode = { kind: 'exclusive' };
  const threeSlots: HoldMode = { kind: 'slots', slots: 3 };
  test.each([
    [[1, '7', -1], { acquired: true, fence: '7', slot: undefined }],
    [[0, 3, -1, '0'], { acquired: false, place: 3, nextInMs: undefined, ticket: '0' }],
    [[0, 3, -1, '12'], { acquired: false, place: 3, nextInMs: undefined, ticket: '12' }],
    [[0, 0, 1500, '0'], { acquired: false, place: 0, nextInMs: 1500, ticket: '0' }],
    [[2, 'slots', 3, 2, 1], { acquired: false, mismatch: { kind: 'slots', slots: 3, holders: 2, waiters: 1 } }],
  ])('%j', (reply, expected) => {
    expect(parseEnterReply(reply, alone)).toEqual(expected);
  });

  test.each([
    [[1, '7', 0], threeSlots, 0],
    [[1, '7', 2], threeSlots, 2],
    [[1, '7', -1], { kind: 'shared' } as HoldMode, undefined],
  ])('%j with %j: slot %s', (reply, mode, slot) => {
    expect(parseEnterReply(reply, mode)).toEqual({ acquired: true, fence: '7', slot });
  });

  test.each([
    [[1, '7', 3], threeSlots, 'slot 3 (expected 0 to 2 for --slots 3)'],
    [[1, '7', -1], threeSlots, 'slot -1 (expected 0 to 2 for --slots 3)'],
    [[1, '7', 0], alone, 'slot 0 (expected -1, no slot, without --slots)'],
    [[1, '7', 1], { kind: 'shared' } as HoldMode, 'slot 1 (expected -1, no slot, without --slots)'],
  ])('%j with %j → %s', (reply, mode, expected) => {
    expect(verdict(() => parseEnterReply(reply, mode))).toContain(expected);
  });

  test.each([
    [[1, '7'], 'an array of 2'],
    [[1, '0', -1], 'a fencing token of "0"'],
    [[1, '7', 1000], 'an array of 3'],
    [[1, '7', -2], 'an array of 3'],
    [[0, -1, 5], 'an array of 3'],
    [[0, 1, -3], 'an array of 3'],
    [[2, 'bogus', 3, 0, 0], 'an array of 5'],
    [[2, 'slots', -1, 0, 0], 'an array of 5'],
    [[3], 'an array of 1'],
    [null, 'nil'],
  ])('%j → %s', (reply, expected) => {
    expect(verdict(() => parseEnterReply(reply, alone))).toContain(expected);
  });
});

describe('INSPECT: {pttl, counter or nil, flat HGETALL, holders, line, length, time}', () => {
  // The reply with the lock's hash `flat`, no holders of --slots/--shared, no line.
  const reply = (pttl: unknown, counter: unknown, flat: unknown, ...rest: unknown[]) => [
    pttl,
    counter,
    flat,
    ...(rest.length ? rest : [[], [], 0, 1_700_000_000_000]),
  ];
  test.each([
    [reply(-2, null, []), 'ok'],
    [reply(5000, '12', ['owner', 'o', 'fence', '12', 'host', 'h']), 'ok'],
    [reply(5000, '12', ['owner', '', 'fence', '12', 'forced_ms', '1']), 'ok'],
    [reply(5000, '12', ['owner', 'o']), 'ok'],
    [reply(-3, null, []), 'with an array of 7'],
    [reply(5000, 'abc', []), 'a fence counter of "abc"'],
    [reply(5000, 12, []), 'a fence counter of the integer 12'],
    // A holder's fields are only shown (escaped), never used as a token: a forged fence is data.
    [reply(5000, '12', ['fence', '1e5']), 'ok'],
    [reply(5000, '12', ['owner']), 'pairs of strings'],
    // A forged field of any size is accepted and cut when shown (the reader bounds a reply at 8 MiB).
    [reply(5000, '12', ['cmd', 'x'.repeat(5000)]), 'ok'],
    [reply(5000, '12', ['cmd', ['x']]), 'an array of 2 (string, array)'],
    [
      reply(
        5000,
        '12',
        Array.from({ length: 5000 }, () => 'f'),
      ),
      'an array of 5000',
    ],
    // Holders of --slots/--shared, and the line: forged details are shown as unknown, never thrown on.
    [
      reply(
        5000,
        '3',
        ['mode', 'slots', 'slots', '2', 'h:a', '{"fence":"3","slot":"1"}', 'h:b', 'not json'],
        ['a', '1700000005000', 'b', 'x'],
        ['w', '1', '{"mode":"shared"}', 'v', '2', '[]'],
        2,
        1_700_000_000_000,
      ),
      'ok',
    ],
    [reply(5000, '3', [], ['a'], [], 0, 1), 'lists of strings'],
    [reply(5000, '3', [], [], ['w', '1'], 1, 1), 'lists of strings'],
    [reply(5000, '3', [], [], [], -1, 1), 'with an array of 7'],
    [[5000, '12'], 'with an array of 2'],
    ['x', 'with "x"'],
  ])('%j → %s', (reply, expected) => {
    const reason = verdict(() => parseInspectReply(reply));
    expect(reason).toContain(expected);
  });

  test('the holders of --slots and the line come back as data', () => {
    const state = parseInspectReply(
      reply(
        5000,
        '3',
        [
          'mode',
          'slots',
          'slots',
          '2',
          'h:a',
          '{"fence":"3","slot":"1","host":"h1","pid":"7"}',
          'h:!b',
          '{"fence":"2","slot":"0","forced_ms":"5"}',
        ],
        ['a', '1700000005000', '!b', '1700000001000'],
        ['w', '1', '{"mode":"slots","slots":"2","host":"h2","pid":"9","since_ms":"1699999990000"}'],
        1,
        1_700_000_000_000,
      ),
    );
    expect(state.mode).toEqual({ kind: 'slots', slots: 2 });
    expect(state.holders.map((h) => [h.slot, h.fence, h.owner, h.ttlLeftMs])).toEqual([
      [0, '2', '', 1000],
      [1, '3', 'a', 5000],
    ]);
    expect(state.line).toEqual([
      {
        mode: 'slots',
        host: 'h2',
        pid: '9',
        cmd: '',
        sinceMs: 1_699_999_990_000,
        waitedMs: 10_000,
        priority: 0,
        supersede: false,
      },
    ]);
    expect(state.lineLength).toBe(1);
  });
});

describe('FORCE_RELEASE: {ms closed, flat HGETALL, holders, server ms}', () => {
  const T = 1_700_000_000_000;
  test.each([
    [[0, [], [], T], 'ok'],
    [[1500, ['owner', 'o', 'fence', '3'], [], T], 'ok'],
    [[1500, [], ['{"fence":"3","slot":"2"}', 'garbage'], T], 'ok'],
    [[-1, [], [], T], 'with an array of 4'],
    [[0, [], []], 'with an array of 3'],
    [[0, [], [], -5], 'with an array of 4'],
    [[0, [], [], 'now'], 'with an array of 4'],
    [[0, [], [1], T], 'with an array of 4'],
    [null, 'nil'],
    [[0, ['fence', 'NaN'], [], T], 'ok'],
  ])('%j → %s', (reply, expected) => {
    expect(verdict(() => parseForceReleaseReply(reply))).toContain(expected);
  });
});

describe('SCAN: {cursor, names}', () => {
  test.each([
    [['0', []], 'ok'],
    [['17', ['dlock:{a}']], 'ok'],
    ['x', 'with "x"'],
    [['-1', []], 'an array of 2'],
    [['0', [5]], 'an array of 2'],
    [['0', 'names'], 'an array of 2'],
    [[0, []], 'an array of 2 (integer, array)'],
  ])('%j → %s', (reply, expected) => {
    expect(verdict(() => parseScanReply(reply))).toContain(expected);
  });
});

describe('a malformed reply fails the instance at once', () => {
  test('its reason reads "the instance failed: ..." and no wait retries it', () => {
    const error = new MalformedReplyError('it answered the acquire script with nil');
    expect(describeError(error)).toBe('the instance failed: it answered the acquire script with nil');
    expect(describeFailure(error).permanent).toBe(true);
  });

  test('shape() shows text inert and short, and never recurses', () => {
    expect(shape('a\u001b]0;x\u0007\u009b"\\\u2028')).toBe('"a\\x1b]0;x\\x07\\x9b\\"\\\\\\u{2028}"');
    expect(shape('y'.repeat(100))).toBe('a string of 100 bytes');
    expect(shape(deep(1_000_000))).toBe('an array of 1 (array)');
  });
});

const b = (text: string) => Buffer.from(text);
const cmd = (name: string, ...args: string[]) => ({ name, args });

describe('replies ioredis acts on itself', () => {
  test.each([
    ['get-master-addr-by-name', null, true],
    ['get-master-addr-by-name', [b('10.0.0.1'), b('6379')], true],
    ['get-master-addr-by-name', [b('redis-1.example'), b('6379')], true],
    ['get-master-addr-by-name', 5, false],
    ['get-master-addr-by-name', [b('10.0.0.1'), b('6379'), b('x')], false],
    ['get-master-addr-by-name', [b('\0\xff host'), b('6379')], false],
    ['get-master-addr-by-name', [[b('x')], 5], false],
    ['get-master-addr-by-name', [b('10.0.0.1'), b('99999')], false],
    ['get-master-addr-by-name', [b('10.0.0.1'), b('NaN')], false],
    ['sentinels', [[b('ip'), b('10.0.0.2'), b('port'), b('26379'), b('flags'), b('sentinel')]], true],
    ['sentinels', [[b('ip'), b('a b'), b('port'), b('26379')]], false],
    ['sentinels', [5], false],
  ])('SENTINEL %s %j → ok %s', (sub, reply, ok) => {
    expect(checkClientReply(cmd('sentinel', sub, 'mymaster'), reply) === undefined).toBe(ok);
  });

  test.each([
    [[[0, 16383, [b('127.0.0.1'), 7000, b('id')]]], true],
    [[[0, 100, [b(''), 7000]]], true],
    [null, false],
    [b('slots'), false],
    [[[0, 1e12, [b('127.0.0.1'), 7000]]], false],
    [[[100, 0, [b('127.0.0.1'), 7000]]], false],
    [[[0, 100, [null, 7000]]], false],
    [[[0, 100, [b('127.0.0.1'), b('7000')]]], false],
    [[[0, 100]], false],
  ])('CLUSTER SLOTS %j → ok %s', (reply, ok) => {
    expect(checkClientReply(cmd('cluster', 'SLOTS'), reply) === undefined).toBe(ok);
  });

  test.each([
    [[b('message'), b('chan'), b('payload')], true],
    [[b('subscribe'), b('chan'), 1], true],
    [[b('unsubscribe'), null, 0], true],
    [[b('message'), null, 5], false],
    [[b('message'), b('chan')], false],
    [b('message'), false],
    [[5, b('chan'), b('x')], false],
    [[b('subscribe'), b('chan'), b('1')], false],
    [[b('surprise'), b('chan'), b('x')], false],
  ])('pub/sub %j → ok %s', (reply, ok) => {
    expect(checkPushReply(reply) === undefined).toBe(ok);
  });

  test('INFO and CLUSTER INFO are text', () => {
    expect(checkClientReply(cmd('info'), b('role:master'))).toBeUndefined();
    expect(checkClientReply(cmd('info'), [b('x')])).toBeDefined();
    expect(checkClientReply(cmd('cluster', 'info'), 5)).toBeDefined();
  });
});
