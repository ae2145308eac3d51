// dlock and the real `etcdctl lock` (3.4.23) on one etcd lock: one line of both kinds of holder,
// served in FIFO order (the order of their keys' create revisions), never two at once; the default
// prefix `dlock:` meets `etcdctl lock dlock:NAME`, `--prefix ''` meets `etcdctl lock NAME`; and a `/`
// in a dlock name is escaped, so that `a/b` and `a` are two locks (as they are not for etcdctl).

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { EtcdServer } from '../../support/etcd-server.mjs';
import { waitUntil } from '../../support/wait-until.mjs';
import { childPid, hold, onlyEvent, spawnDlock, tempDir, type Held } from '../fixtures/observe.js';
import { dlock, type Running } from '../helpers/cli.js';
import { etcdctlLock, exitWithin, lineOf, useEtcdServer, type Etcdctl } from '../helpers/etcd.js';

let etcd: EtcdServer;
useEtcdServer((server) => (etcd = server));

/**
 * A command that appends "start NAME <ns>" to LOG, then runs until STOP exists (or 50 ms when
 * there is no STOP), then appends "end NAME <ns>".
 */
const section = (log: string, name: string, stop = '') => [
  'sh',
  '-c',
  'echo "start $1 $(date +%s%N)" >>"$0"; ' +
    'if [ -n "$2" ]; then while [ ! -e "$2" ]; do sleep 0.01; done; else sleep 0.05; fi; ' +
    'echo "end $1 $(date +%s%N)" >>"$0"',
  log,
  name,
  stop,
];

/** The lines the sections wrote: [what, name, ns]. */
function sectionLog(log: string): [string, string, bigint][] {
  if (!existsSync(log)) return [];
  return readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .map((line) => line.split(' '))
    .map(([what, name, ns]) => [what, name, BigInt(ns)]);
}

/** `dlock run --redis etcd://… --log-format json [flags] name -- command` */
const dlockRun = (name: string, command: string[], flags: string[] = []) =>
  spawnDlock(['run', '--redis', etcd.url, '--log-format', 'json', ...flags, name, '--', ...command]);

/** `waiting`, failed at once when one of `holders` exits first (it should be holding or in line). */
function whileRunning<T>(waiting: Promise<T>, holders: (Running | Etcdctl)[]): Promise<T> {
  const exits = holders.map((holder) =>
    holder.result.then((result) => {
      throw new Error(`a holder exited ${result.code} while it should be in line; stderr:\n${result.stderr}`);
    }),
  );
  return Promise.race([waiting, ...exits]);
}

/** Wait until the lock's line (keys under `lock/`) has as many keys as `holders`: the last one has queued. */
const queued = (lock: string, holders: (Running | Etcdctl)[]) =>
  whileRunning(
    waitUntil(`${holders.length} keys in the line of ${lock}`, async () => {
      return (await lineOf(etcd, lock)).length === holders.length;
    }),
    holders,
  );

/** Wait until the first holder's section has started. */
const firstStarted = (log: string, holder: Running | Etcdctl) =>
  whileRunning(
    waitUntil('the first holder to start', () => sectionLog(log).length > 0),
    [holder],
  );

/** Every holder ran once, one after the other, in `order`: no start before the previous end. */
function expectOneAtATime(log: string, order: string[]): void {
  const lines = sectionLog(log);
  expect(lines.map(([what, name]) => `${what} ${name}`)).toEqual(
    order.flatMap((name) => [`start ${name}`, `end ${name}`]),
  );
  for (let i = 2; i < lines.length; i += 2) expect(lines[i][2]).toBeGreaterThanOrEqual(lines[i - 1][2]);
}

async function expectAllExit0(holders: (Running | Etcdctl)[]): Promise<void> {
  const results = await Promise.all(holders.map((holder) => holder.result));
  expect(
    results.map((result) => [result.code, result.stderr.includes('"event":"error"') ? result.stderr : '']),
  ).toEqual(results.map(() => [0, '']));
}

/** The fence a dlock got (its key's create revision). */
const fenceOf = async (run: Running) => BigInt(onlyEvent((await run.result).stderr, 'acquired').fence!);

describe('one line of etcdctl and dlock holders: FIFO, never two at once', () => {
  test('default prefix: etcdctl lock dlock:job, dlock run job, etcdctl lock dlock:job, dlock run job', async () => {
    const dir = tempDir();
    const log = join(dir, 'log');
    const stop = join(dir, 'stop');
    const a = etcdctlLock(etcd.endpoint, 'dlock:job', section(log, 'A', stop));
    await firstStarted(log, a);
    const b = dlockRun('job', section(log, 'B'));
    await queued('dlock:job', [a, b]);
    const c = etcdctlLock(etcd.endpoint, 'dlock:job', section(log, 'C'));
    await queued('dlock:job', [a, b, c]);
    const d = dlockRun('job', section(log, 'D'));
    await queued('dlock:job', [a, b, c, d]);
    expect(sectionLog(log).map(([what, name]) => `${what} ${name}`)).toEqual(['start A']);

    writeFileSync(stop, '');
    await expectAllExit0([a, b, c, d]);
    expectOneAtATime(log, ['A', 'B', 'C', 'D']);
    expect(await fenceOf(b)).toBeLessThan(await fenceOf(d));
    expect(await lineOf(etcd, 'dlock:job')).toEqual([]);
  });

  test("--prefix '': dlock run job, etcdctl lock job, dlock run job, etcdctl lock job", async () => {
    const dir = tempDir();
    const log = join(dir, 'log');
    const stop = join(dir, 'stop');
    const a = dlockRun('job', section(log, 'A', stop), ['--prefix', '']);
    await firstStarted(log, a);
    const b = etcdctlLock(etcd.endpoint, 'job', section(log, 'B'));
    await queued('job', [a, b]);
    const c = dlockRun('job', section(log, 'C'), ['--prefix', '']);
    await queued('job', [a, b, c]);
    const d = etcdctlLock(etcd.endpoint, 'job', section(log, 'D'));
    await queued('job', [a, b, c, d]);
    expect(sectionLog(log).map(([what, name]) => `${what} ${name}`)).toEqual(['start A']);

    writeFileSync(stop, '');
    await expectAllExit0([a, b, c, d]);
    expectOneAtATime(log, ['A', 'B', 'C', 'D']);
    expect(await fenceOf(a)).toBeLessThan(await fenceOf(c));
    expect(await lineOf(etcd, 'job')).toEqual([]);
  });
});

describe('a / in a dlock name is escaped: a/b and a are two locks', () => {
  /** `dlock run -n name -- true`: 0 when the lock was free, 75 when it was held. */
  const tryRun = async (name: string) => (await dlock(['run', '--redis', etcd.url, '-n', name, '--', 'true'])).code;

  /** A dlock holding `name` until stopped; resolves once its command runs. */
  async function holding(name: string): Promise<Held> {
    const holder = hold(name, { redis: etcd.url });
    const exited = holder.result.then((result) => {
      throw new Error(`dlock exited ${result.code} before its command started; stderr:\n${result.stderr}`);
    });
    await Promise.race([childPid(holder.dir), exited]);
    return holder;
  }

  test('dlock holds x/y: dlock x is free, and so is etcdctl lock dlock:x', async () => {
    const holder = await holding('x/y');
    expect(await tryRun('x')).toBe(0);
    const etcdctl = await exitWithin(etcdctlLock(etcd.endpoint, 'dlock:x', ['true']), 5_000);
    expect(etcdctl?.code).toBe(0);
    expect(await tryRun('x/y')).toBe(75);
    holder.stop();
    expect((await holder.result).code).toBe(0);
  });

  test('dlock holds p: dlock p/q is free', async () => {
    const holder = await holding('p');
    expect(await tryRun('p/q')).toBe(0);
    expect(await tryRun('p')).toBe(75);
    holder.stop();
    expect((await holder.result).code).toBe(0);
  });

  test('etcdctl lock dlock:m holds: dlock m/n is free, dlock m is not', async () => {
    const dir = tempDir();
    const log = join(dir, 'log');
    const stop = join(dir, 'stop');
    const etcdctl = etcdctlLock(etcd.endpoint, 'dlock:m', section(log, 'E', stop));
    await firstStarted(log, etcdctl);
    expect(await tryRun('m/n')).toBe(0);
    expect(await tryRun('m')).toBe(75);
    writeFileSync(stop, '');
    expect((await etcdctl.result).code).toBe(0);
  });
});
