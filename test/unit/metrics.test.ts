// dlock metrics without a server: --listen and --push as config reads them, exit statuses as
// classes, a history folded into counts, and the key labels (docs/reference/commands.md).

import { expect, test } from 'vitest';
import { metricsConfig } from '../../src/config/index.js';
import { UsageError } from '../../src/errors.js';
import { buildRegistry, keyLabels } from '../../src/metrics/registry.js';
import { historyStats } from '../../src/metrics/history-stats.js';
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

test('--textfile: the name must end in .prom (all node_exporter reads); --only needs keys', () => {
  expect(output('textfile', 'dir/dlock.prom')).toEqual({ kind: 'textfile', path: 'dir/dlock.prom' });
  for (const name of ['x.txt', 'dlock.prom.tmp', '.prom', 'dir/.prom', 'x.PROM'])
    expect(() => output('textfile', name), name).toThrow(/^--textfile: the name must end in \.prom/);
  expect(metricsConfig(['a'], { only: true }, {}).only).toBe(true);
  expect(() => metricsConfig([], { only: true }, {})).toThrow(/^--only: name the keys/);
});

test('--push: an http(s) URL kept as given; anything else a usage error without the password', () => {
  expect(output('push', 'https://u:p@gw:9091/base')).toEqual({ kind: 'push', url: 'https://u:p@gw:9091/base' });
  expect(() => output('push', 'ftp://u:secret@gw')).toThrow(/^--push: expected an http/);
  expect(() => output('push', 'ftp://u:secret@gw')).not.toThrow(/secret/);
  expect(() => output('push', 'http://gw/?a=1')).toThrow(/no \?query/);
  expect(() => metricsConfig([], { push: 'http://gw', textfile: 'a.prom' }, {})).toThrow(
    '--textfile and --push: choose one',
  );
});

test('a history: how many entries, the oldest, and the newest success with a date', () => {
  const base = (atMs: number | undefined) => ({ atMs, position: `${atMs ?? 9e15}-0`, extra: {} });
  const stats = historyStats([
    { ...base(undefined), event: 'released', exit: 0, heldMs: 5 },
    { ...base(3000), event: 'released', exit: 0, heldMs: 2000 },
    { ...base(2000), event: 'acquired', waitedMs: 250 },
    { ...base(1000), event: 'released', exit: 0, heldMs: { unreadable: 'x' } },
    { ...base(4000), event: 'released', exit: { unreadable: '00x' } },
  ]);
  expect(stats).toEqual({ entries: 5, oldestMs: 1000, lastSuccessMs: 3000 });
});

test('key labels: escaped, cut, and two that cut alike (or clash with a real "#2") kept apart', () => {
  const lock = (key: string): LockSample => ({
    key,
    held: true,
    holders: 1,
    closed: 0,
    slots: 1,
    waiters: 0,
    history: undefined,
    totals: undefined,
  });
  const long = 'k'.repeat(300);
  const labels = keyLabels([lock(`${long}a`), lock(`${long}b`), lock('a\nb'), lock('x'), lock('x#2'), lock('x')]);
  expect(labels[0]).toBe(`${'k'.repeat(200)}…(101 more)`);
  expect(labels[1]).toBe(`${labels[0]}#2`);
  expect(labels.slice(2)).toEqual(['a\\x0ab', 'x', 'x#2', 'x#3']);
});

test('a registry of its own per call, no process metrics', async () => {
  const text = await buildRegistry({ locks: [], unreadable: [], omitted: 0 }, 0, 0, { prefix: 'dlock:' }).metrics();
  expect(text).not.toMatch(/process_|nodejs_/);
  expect(text).toContain('dlock_metrics_locks_unreadable{prefix="dlock:"} 0');
});
