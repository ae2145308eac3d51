// dlock metrics without a server: --listen and --push as config reads them, exit statuses as
// classes, a history folded into counts, and the key labels (docs/reference/commands.md).

import { expect, test } from 'vitest';
import { metricsConfig } from '../../src/config/index.js';
import { UsageError } from '../../src/errors.js';
import { buildRegistry, keyLabels } from '../../src/metrics/registry.js';
import { classifyExit, historyStats } from '../../src/metrics/history-stats.js';
import type { LockSample } from '../../src/metrics/collect.js';

const output = (...args: string[]) => {
  const raw: Record<string, string> = {};
  for (let i = 0; i < args.length; i += 2) raw[args[i]] = args[i + 1];
  return metricsConfig([], raw, {}).output;
};

test.each([
  ['9464', { kind: 'listen', host: '127.0.0.1', port: 9464 }],
  ['0.0.0.0:9464', { kind: 'listen', host: '0.0.0.0', port: 9464 }],
  ['[::1]:9464', { kind: 'listen', host: '::1', port: 9464 }],
  ['[::]:1', { kind: 'listen', host: '::', port: 1 }],
  ['metrics.local:65535', { kind: 'listen', host: 'metrics.local', port: 65535 }],
])('--listen %s: loopback unless an address is given', (value, expected) => {
  expect(output('listen', value)).toEqual(expected);
});

test.each(['', ':9464', '0', '65536', 'abc', '1.2.3.4:', '[1.2.3.4]:80', 'a:b:80', '9464 '])(
  '--listen %j: a usage error naming it',
  (value) => {
    expect(() => output('listen', value)).toThrow(UsageError);
    expect(() => output('listen', value)).toThrow(/^--listen: /);
  },
);

test('--push: an http(s) URL kept as given; anything else a usage error without the password', () => {
  expect(output('push', 'https://u:p@gw:9091/base')).toEqual({ kind: 'push', url: 'https://u:p@gw:9091/base' });
  expect(() => output('push', 'ftp://u:secret@gw')).toThrow(/^--push: expected an http/);
  expect(() => output('push', 'ftp://u:secret@gw')).not.toThrow(/secret/);
  expect(() => output('push', 'http://gw/?a=1')).toThrow(/no \?query/);
  expect(() => metricsConfig([], { push: 'http://gw', textfile: 'a.prom' }, {})).toThrow(
    '--textfile and --push: choose one',
  );
});

test.each([
  [undefined, 'none'],
  ['', 'none'],
  ['lost', 'lost'],
  ['unknown', 'unknown'],
  ['0', 'ok'],
  ['1', 'error'],
  ['125', 'error'],
  ['126', 'cannot_run'],
  ['127', 'cannot_run'],
  ['143', 'signal'],
  ['255', 'signal'],
  ['256', 'other'],
  ['-1', 'other'],
  ['0x0', 'other'],
  [' 0', 'other'],
])('exit %j is %s', (exit, expected) => {
  expect(classifyExit(exit)).toBe(expected);
});

test('a history folds in one pass; the newest success with a date is the last success', () => {
  const entry = (ms: number | undefined, event: string, fields: Record<string, string> = {}) => ({
    id: `${ms ?? 9e15}-0`,
    ms,
    event,
    fields,
  });
  const stats = historyStats([
    entry(undefined, 'released', { exit: '0', held_ms: '5' }),
    entry(3000, 'released', { exit: '0', held_ms: '2000' }),
    entry(2000, 'acquired', { waited_ms: '250' }),
    entry(1000, 'released', { exit: '0', held_ms: 'x' }),
  ]);
  expect(stats).toMatchObject({ entries: 4, oldestMs: 1000, lastSuccessMs: 3000, acquisitions: 1 });
  expect(stats.waitSeconds).toEqual([0.25]);
  expect(stats.holdSeconds).toEqual([0.005, 2]);
  expect(stats.releases.ok).toBe(3);
});

test('key labels: escaped, cut, and two that cut alike (or clash with a real "#2") kept apart', () => {
  const lock = (key: string): LockSample => ({ key, held: true, holders: 1, slots: 1, waiters: 0, history: undefined });
  const long = 'k'.repeat(300);
  const labels = keyLabels([lock(`${long}a`), lock(`${long}b`), lock('a\nb'), lock('x'), lock('x#2'), lock('x')]);
  expect(labels[0]).toBe(`${'k'.repeat(200)}…(101 more)`);
  expect(labels[1]).toBe(`${labels[0]}#2`);
  expect(labels.slice(2)).toEqual(['a\\x0ab', 'x', 'x#2', 'x#3']);
});

test('a registry of its own per call, no process metrics', async () => {
  const text = await buildRegistry({ locks: [], unreadable: [], omitted: 0 }, 0).metrics();
  expect(text).not.toMatch(/process_|nodejs_/);
  expect(text).toContain('dlock_metrics_locks_unreadable 0');
});
