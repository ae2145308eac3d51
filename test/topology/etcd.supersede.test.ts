// --supersede on etcd (docs/operations/etcd.md): a newer --supersede waiter marks the older ones'
// keys, and they leave the line with the conflict code, told by whom; the holder (dlock's or
// etcdctl lock's) and waiters without the flag (an etcdctl lock waiter too) are never touched.
// --priority is refused there (64): etcd's mutex orders by create revision, as etcdctl lock does.

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { EtcdServer } from '../../support/etcd-server.mjs';
import { waitUntil } from '../../support/wait-until.mjs';
import { hold, signalsSeen, spawnDlock, tempDir } from '../fixtures/observe.js';
import { dlock, type Running } from '../helpers/cli.js';
import { etcdctlLock, lineOf, useEtcdServer } from '../helpers/etcd.js';
import { eventOf, inLine } from '../helpers/line.js';

let etcd: EtcdServer;
useEtcdServer((server) => (etcd = server));

/** A dlock waiter on etcd whose command appends `label` to `file`. */
const appender = (name: string, file: string, label: string, flags: string[]): Running =>
  spawnDlock([
    'run',
    '--redis',
    etcd.url,
    '--log-format',
    'json',
    ...flags,
    name,
    '--',
    'sh',
    '-c',
    `echo ${label} >>${file}`,
  ]);

const order = (file: string) => readFileSync(file, 'utf8').trim().split('\n');

test('five --supersede waiters joining one by one: only the newest runs, the four others leave in order, told by whom', async () => {
  const file = join(tempDir(), 'order');
  const holder = hold('deploy', { redis: etcd.url, onSignal: 'ignore' });
  await holder.child();
  const waiters: Running[] = [];
  for (let i = 0; i < 5; i++) {
    const waiter = appender('deploy', file, `v${i}`, ['--supersede']);
    await inLine(waiter);
    if (i > 0) expect((await waiters[i - 1].result).code).toBe(75);
    waiters.push(waiter);
  }
  // The holder and the newest are left in line.
  await waitUntil('the holder and one waiter in line', async () => (await lineOf(etcd, 'dlock:deploy')).length === 2);
  holder.stop();
  expect((await holder.result).code).toBe(0);
  const newest = await waiters[4].result;
  expect(newest.code, newest.stderr).toBe(0);
  expect(order(file)).toEqual(['v4']);
  expect(signalsSeen(holder.dir)).toEqual([]);
  const pids = waiters.map((w) => w.process.pid!);
  for (let i = 0; i < 4; i++) {
    const result = await waiters[i].result;
    const event = eventOf(result, 'superseded');
    expect(event).toMatchObject({ exit_code: 75, by_pid: pids[i + 1], by_cmd: `sh -c echo v${i + 1} >>${file}` });
    expect(event.message).toMatch(/^deploy: superseded in line by \S+ \(pid \d+\), running sh -c echo v/);
  }
  const at = waiters.slice(0, 4).map(async (w) => eventOf(await w.result, 'superseded').by_at_ms as number);
  const times = await Promise.all(at);
  for (let i = 1; i < 4; i++) expect(times[i]).toBeGreaterThanOrEqual(times[i - 1]);
});

test('an etcdctl lock holder and an etcdctl lock waiter are never touched by a --supersede join', async () => {
  const dir = tempDir();
  const stop = join(dir, 'stop');
  const holder = etcdctlLock(etcd.endpoint, 'dlock:mixed', ['sh', '-c', `while [ ! -e ${stop} ]; do sleep 0.02; done`]);
  await waitUntil('etcdctl holds', async () => (await lineOf(etcd, 'dlock:mixed')).length === 1);
  const waiter = etcdctlLock(etcd.endpoint, 'dlock:mixed', ['echo', 'etcdctl-waiter']);
  await waitUntil('etcdctl waits', async () => (await lineOf(etcd, 'dlock:mixed')).length === 2);
  const file = join(dir, 'order');
  const older = appender('mixed', file, 'older', ['--supersede']);
  await inLine(older);
  const newer = appender('mixed', file, 'newer', ['--supersede']);
  await inLine(newer);
  expect((await older.result).code).toBe(75);
  writeFileSync(stop, '');
  expect((await holder.result).code).toBe(0);
  const waited = await waiter.result;
  expect(waited.code).toBe(0);
  expect(waited.stdout).toContain('etcdctl-waiter');
  expect((await newer.result).code).toBe(0);
  expect(order(file)).toEqual(['newer']);
});

test('--priority is refused on etcd with 64 and the reason; --supersede with -n too', async () => {
  const priority = await dlock(['run', '--redis', etcd.url, '--priority', '5', 'p', '--', 'true']);
  expect(priority.code).toBe(64);
  expect(priority.stderr.trim()).toMatch(/^dlock: --priority is not built on etcd: etcd's mutex serves waiters by/);
  const noWait = await dlock(['run', '--redis', etcd.url, '-n', '--supersede', 'p', '--', 'true']);
  expect(noWait.code).toBe(64);
});

test('a superseded waiter stopped until its lease ran out never runs when it comes back, nor supersedes the newer', async () => {
  const file = join(tempDir(), 'order');
  const holder = hold('stalled', { redis: etcd.url });
  await holder.child();
  const older = appender('stalled', file, 'older', ['--supersede', '--ttl', '2s']);
  await inLine(older);
  older.process.kill('SIGSTOP');
  try {
    // Its lease runs out while it is stopped (its key goes); a newer one joins and runs when the holder ends.
    await waitUntil('the stopped waiter out of line', async () => (await lineOf(etcd, 'dlock:stalled')).length === 1);
    const newer = appender('stalled', file, 'newer', ['--supersede']);
    await inLine(newer);
    holder.stop();
    expect((await newer.result).code).toBe(0);
  } finally {
    older.process.kill('SIGCONT');
  }
  const result = await older.result;
  expect(result.code, result.stderr).toBe(75);
  expect(eventOf(result, 'superseded').message).toMatch(/superseded in line by .*running sh -c echo newer/);
  expect(order(file)).toEqual(['newer']);
});
