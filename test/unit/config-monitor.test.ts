// --ping, --ping-busy, --ping-timeout, --on-event and their DLOCK_ variables -> MonitorConfig, as a
// table (docs/reference/options.md; exit 64 for every bad input).

import { describe, expect, test } from 'vitest';
import { acquireConfig, monitorConfig, runConfig, type Env, type RawOptions } from '../../src/config/index.js';
import { UsageError } from '../../src/errors.js';

const URL = 'https://hc-ping.com/5f1c';

describe('monitorConfig', () => {
  // [raw flags, env, expected]
  test.each<[RawOptions, Env, ReturnType<typeof monitorConfig>]>([
    [{}, {}, undefined],
    [{}, { DLOCK_PING_URL: '', DLOCK_ON_EVENT: '' }, undefined],
    [{ ping: URL }, {}, { pingUrl: URL, pingBusy: false, onEvent: undefined, timeoutMs: 5_000 }],
    [
      {},
      { DLOCK_PING_URL: URL, DLOCK_PING_TIMEOUT: '2s' },
      { pingUrl: URL, pingBusy: false, onEvent: undefined, timeoutMs: 2_000 },
    ],
    [
      { ping: 'http://a/b', pingBusy: true, pingTimeout: '30s' },
      { DLOCK_PING_URL: URL },
      { pingUrl: 'http://a/b', pingBusy: true, onEvent: undefined, timeoutMs: 30_000 },
    ],
    [
      { onEvent: 'logger -t dlock' },
      {},
      { pingUrl: undefined, pingBusy: false, onEvent: 'logger -t dlock', timeoutMs: 5_000 },
    ],
    [{}, { DLOCK_ON_EVENT: './hook' }, { pingUrl: undefined, pingBusy: false, onEvent: './hook', timeoutMs: 5_000 }],
  ])('%j %j', (raw, env, expected) => {
    expect(monitorConfig(raw, env)).toEqual(expected);
  });

  // [raw flags, env, message]
  test.each<[RawOptions, Env, RegExp]>([
    [{ ping: 'ftp://x/y' }, {}, /^--ping: expected an http:\/\/ or https:\/\/ URL \(got "ftp:\/\/x\/y"\)$/],
    [{ ping: 'hc-ping.com/x' }, {}, /^--ping: expected an http/],
    [{}, { DLOCK_PING_URL: 'x' }, /^DLOCK_PING_URL: expected an http/],
    [{ ping: 'ftp://u:secret@h/x' }, {}, /^--ping: expected an http.*ftp:\/\/u:\*\*\*@h\/x/],
    [{ ping: URL, pingTimeout: 'soon' }, {}, /^--ping-timeout: not a duration/],
    [{ ping: URL, pingTimeout: '0s' }, {}, /^--ping-timeout: must be greater than zero/],
    [{ ping: URL, pingTimeout: '31s' }, {}, /^--ping-timeout: must be at most 30s/],
    [{ ping: URL }, { DLOCK_PING_TIMEOUT: '1m' }, /^DLOCK_PING_TIMEOUT: must be at most 30s/],
    [{ pingBusy: true }, {}, /^--ping-busy needs --ping/],
    [{ onEvent: '' }, {}, /^--on-event: expected a command/],
  ])('%j %j -> 64', (raw, env, message) => {
    let error: unknown;
    try {
      monitorConfig(raw, env);
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).message).toMatch(message);
  });
});

describe('run and acquire carry it', () => {
  test('run: monitor is undefined without --ping/--on-event (the monitor code is not loaded)', () => {
    expect(runConfig('k', ['true'], {}, {}).monitor).toBeUndefined();
    expect(runConfig('k', ['true'], { ping: URL }, {}).monitor?.pingUrl).toBe(URL);
  });

  test('acquire --no-keeper refuses --ping (no section end to ping), ignores DLOCK_PING_URL, keeps --on-event', () => {
    expect(() => acquireConfig('k', { keeper: false, ping: URL }, {})).toThrow(/^--ping and --no-keeper: choose one/);
    expect(acquireConfig('k', { keeper: false }, { DLOCK_PING_URL: URL }).monitor).toBeUndefined();
    expect(acquireConfig('k', { keeper: false, onEvent: 'true' }, {}).monitor?.onEvent).toBe('true');
    expect(acquireConfig('k', { ping: URL }, {}).monitor?.pingUrl).toBe(URL);
  });
});
