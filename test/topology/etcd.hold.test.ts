// dlock hold/unhold and --reason on etcd (docs/operations/etcd.md): a hold is a key on a lease no process
// keeps alive (the whole --for, or etcd's longest for a hold until unhold), its reason, user and end in
// the key's details; it blocks dlock and etcdctl lock alike; unhold by the same user revokes its lease;
// another user needs --force. `hold --wait` is refused there (64): a place is the hold's own lease.

import { userInfo } from 'node:os';
import { expect, test } from 'vitest';
import { EtcdServer } from '../../support/etcd-server.mjs';
import { waitUntil } from '../../support/wait-until.mjs';
import { hold, spawnDlock } from '../fixtures/observe.js';
import { dlock } from '../helpers/cli.js';
import { etcdctlLock, leases, lineOf, useEtcdServer } from '../helpers/etcd.js';
import { eventOf, inLine } from '../helpers/line.js';

let etcd: EtcdServer;
useEtcdServer((server) => (etcd = server));

const NOBODY = ['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups'];
/** `dlock <command> --redis <etcd> <rest>`, as this user or as nobody. */
const on = ([command, ...rest]: string[], user?: 'nobody') =>
  dlock([command, '--redis', etcd.url, ...rest], user ? { via: NOBODY } : {});

test('a hold with a reason blocks a --wait run, shows in status text and JSON, and the run starts on unhold', async () => {
  const held = await on(['hold', '--reason', 'release 4.2 freeze', '--for', '1h', 'freeze']);
  expect(held.code, held.stderr).toBe(0);
  expect(held.stdout).toMatch(/^freeze: held by \S+@\S+ for 'release 4.2 freeze' until \d\d:\d\d \(1h\), fence \d+\n$/);
  const run = spawnDlock(['run', '--redis', etcd.url, '--log-format', 'json', '--wait', '1m', 'freeze', '--', 'true']);
  await inLine(run);
  const text = await on(['status', 'freeze']);
  expect(text.stdout).toContain("reason   'release 4.2 freeze'");
  expect(text.stdout).toMatch(/until\s+\S+ \(until \d\d:\d\d, (59m|1h)[^)]*left\)/);
  const json = JSON.parse((await on(['status', '--json', 'freeze'])).stdout) as { holder: Record<string, unknown> };
  expect(json.holder).toMatchObject({ reason: 'release 4.2 freeze', user: userInfo().username, hold: true, pid: null });
  expect(json.holder.until_ms).toEqual(expect.any(Number));
  const busy = await on(['run', '-n', 'freeze', '--', 'true']);
  expect(busy.code).toBe(75);
  expect(busy.stderr).toMatch(/frozen by \S+ for 'release 4.2 freeze' until \d\d:\d\d/);

  const unheldAt = Date.now();
  const unheld = await on(['unhold', 'freeze']);
  expect(unheld.code, unheld.stderr).toBe(0);
  const result = await run.result;
  expect(result.code).toBe(0);
  const handoff = eventOf(result, 'acquired').ts_ms - unheldAt;
  console.log(`unhold (spawned) → the waiting run's acquired: ${handoff.toFixed(0)} ms`);
  expect(handoff).toBeLessThan(5_000);
});

test('an etcdctl lock waits behind a hold; a hold until unhold keeps its lease; another user needs --force', async () => {
  expect((await on(['hold', '--reason', 'no end', 'frozen'])).code).toBe(0);
  const [key] = await lineOf(etcd, 'dlock:frozen');
  const waiter = etcdctlLock(etcd.endpoint, 'dlock:frozen', ['echo', 'etcdctl ran']);
  await waitUntil('etcdctl in line', async () => (await lineOf(etcd, 'dlock:frozen')).length === 2);
  expect(key).toBeDefined();
  expect((await leases(etcd)).length).toBeGreaterThan(0);

  const stranger = await on(['unhold', 'frozen'], 'nobody');
  expect(stranger.code).toBe(64);
  expect(stranger.stderr).toMatch(/not your hold \(you are nobody\); dlock unhold --force frozen/);
  const forced = await on(['unhold', '--force', 'frozen'], 'nobody');
  expect(forced.code, forced.stderr).toBe(0);
  expect(forced.stdout).toMatch(/unheld \(taken from \S+ with --force\)/);
  const ran = await waiter.result;
  expect(ran.code).toBe(0);
  expect(ran.stdout).toContain('etcdctl ran');
});

test('hold --wait is refused on etcd with 64 and the reason; --reason on run is stored and shown', async () => {
  const refused = await on(['hold', '--wait', '1m', '--reason', 'x', 'w']);
  expect(refused.code).toBe(64);
  expect(refused.stderr.trim()).toMatch(
    /^dlock: hold --wait is not built on etcd: a waiter's place there is its hold's own lease/,
  );
  const holder = hold('why', { redis: etcd.url, flags: ['--reason', 'deploying v3'] });
  await holder.child();
  const shown = await on(['status', 'why']);
  expect(shown.stdout).toContain("reason   'deploying v3'");
  holder.stop();
  expect((await holder.result).code).toBe(0);
});
