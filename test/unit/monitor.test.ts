// What --on-event's hooks and --ping's URLs are made of: the event as variables, <url>/<suffix>.

import { describe, expect, test } from 'vitest';
import { eventVariables, MAX_VARIABLE_LENGTH } from '../../src/monitor/hooks.js';
import { pingUrl } from '../../src/monitor/ping.js';

describe('eventVariables', () => {
  test('DLOCK_EVENT and one DLOCK_EVENT_<FIELD> per field: upper-cased, safe names, values as text', () => {
    expect(
      eventVariables({
        ts_ms: 1.5,
        event: 'busy',
        key: 'k',
        released: true,
        holder: { pid: 7, cmd: 'x' },
        last: null,
        'odd-name.x': 'v',
        gone: undefined,
      }),
    ).toEqual({
      DLOCK_EVENT: 'busy',
      DLOCK_EVENT_TS_MS: '1.5',
      DLOCK_EVENT_KEY: 'k',
      DLOCK_EVENT_RELEASED: 'true',
      DLOCK_EVENT_HOLDER: '{"pid":7,"cmd":"x"}',
      DLOCK_EVENT_LAST: '',
      DLOCK_EVENT_ODD_NAME_X: 'v',
    });
  });

  test('a value is cut to MAX_VARIABLE_LENGTH and loses any NUL (an environment cannot hold one)', () => {
    const variables = eventVariables({ event: 'lost', message: `a\0b${'x'.repeat(10_000)}` });
    expect(variables.DLOCK_EVENT_MESSAGE).toHaveLength(MAX_VARIABLE_LENGTH);
    expect(variables.DLOCK_EVENT_MESSAGE.startsWith('abx')).toBe(true);
  });
});

describe('pingUrl', () => {
  test.each([
    ['https://hc-ping.com/uuid', '', 'https://hc-ping.com/uuid'],
    ['https://hc-ping.com/uuid', 'start', 'https://hc-ping.com/uuid/start'],
    ['https://hc-ping.com/uuid/', '3', 'https://hc-ping.com/uuid/3'],
    ['https://hc-ping.com/key/slug?create=1', 'log', 'https://hc-ping.com/key/slug/log?create=1'],
  ])('%s + %j -> %s', (base, suffix, expected) => {
    expect(pingUrl(base, suffix)).toBe(expected);
  });
});
