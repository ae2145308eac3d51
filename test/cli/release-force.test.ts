// release --force keeps the key closed to new holders for the removed holder's remaining lease
// (consul's lock-delay): the removed holder's dlock notices at its next renewal and stops its
// command within that time, so the next holder never runs beside it. --now opens it at once.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { describe, expect, test } from 'vitest';
import { dlock } from '../helpers/cli.js';
import { RedisServer } from '../../support/redis-server.mjs';
import { childPid, hold, onlyEvent, spawnDlock, tempDir, waitForFile } from '../fixtures/observe.js';
import { samples } from '../helpers/metrics.js';
import { useRedisServer } from '../helpers/server.js';

let server: RedisServer;
let admin: Redis;
useRedisServer((started) => {
  server = started;
  admin = started.client();
});

/** A command for the next holder: writes whether `pid` still ran when it started ("R", "S", ... or "gone"). */
function reportOn(pid: number, file: string): string[] {
  return [
    'sh',
    '-c',
    `s=$(sed 's/.*) //' /proc/${pid}/stat 2>/dev/null | cut -c1); echo "\${s:-gone}" >${file}.tmp; mv ${file}.tmp ${file}`,
  ];
}

test("the next holder starts only after the removed holder's command is gone; -n meanwhile is busy and says why", async () => {
  const dir = tempDir();
  // Closed for what is left of a 5s lease (at least 3.3s): long enough for two dlock starts on a loaded machine.
  const old = hold('closed', { redis: server.url, dir, flags: ['--ttl', '5s'], onSignal: 'ignore' });
  const oldChild = await childPid(dir);

  const forced = await dlock(['release', '--force', '--redis', server.url, 'closed']);
  expect(forced.code, forced.stderr).toBe(0);
  expect(forced.stdout).toMatch(
    new RegExp(
      `^closed: released the lock held by \\S+ pid ${old.process.pid}, .*; closed to new holders for [\\d.]+m?s more, until that lease runs out \\(--now opens it at once\\)\\n$`,
    ),
  );
  expect(await admin.hget('dlock:{closed}', 'owner')).toBe('');

  const busy = await dlock(['run', '-n', '--redis', server.url, 'closed', '--', 'true']);
  expect(busy.code).toBe(75);
  expect(busy.stderr).toMatch(
    /^dlock: closed is busy \(closed by release --force \(was held by \S+ pid \d+\)[^\n]*\n$/,
  );
  const status = await dlock(['status', '--redis', server.url, '--json', 'closed']);
  expect(status.code).toBe(0);
  // Closed, not held (as dlock_lock_held 0 says below): exit 0 all the same, the key is not free.
  expect(JSON.parse(status.stdout)).toMatchObject({ held: false, closed: true, holder: { closed: true, fence: '1' } });
  // The list and the metrics say it too: closed, not held by anyone.
  const list = await dlock(['status', '--redis', server.url]);
  expect(list.stdout).toMatch(/^closed \(closed by release --force\) /m);
  const metrics = samples((await dlock(['metrics', '--redis', server.url])).stdout);
  expect([
    metrics.get('dlock_lock_held{key="closed",prefix="dlock:"}'),
    metrics.get('dlock_lock_closed{key="closed",prefix="dlock:"}'),
  ]).toEqual(['0', '1']);

  // The old command ignores SIGTERM: its dlock must SIGKILL it before the lease it lost runs out.
  const report = join(dir, 'report');
  const next = spawnDlock([
    'run',
    '--redis',
    server.url,
    '--wait',
    '10s',
    '--log-format',
    'json',
    'closed',
    '--',
    ...reportOn(oldChild, report),
  ]);
  expect((await next.result).code).toBe(0);
  expect(await waitForFile(report)).toBe('gone\n');
  const oldResult = await old.result;
  expect(oldResult.code).toBe(76);
  expect(onlyEvent(oldResult.stderr, 'lost')).toMatchObject({ reason: 'refused' });
  expect(onlyEvent((await next.result).stderr, 'acquired')).toMatchObject({ fence: '2' });
});

test('--now opens the lock at once (the removed command may still run)', async () => {
  const dir = tempDir();
  const old = hold('now', { redis: server.url, dir, flags: ['--ttl', '3s', '--on-lost', 'ignore'] });
  await childPid(dir);
  const forced = await dlock(['release', '--force', '--now', '--redis', server.url, 'now']);
  expect(forced.code, forced.stderr).toBe(0);
  expect(forced.stdout).toMatch(/; open to new holders now\n$/);
  expect(await admin.exists('dlock:{now}')).toBe(0);
  const next = await dlock(['run', '-n', '--redis', server.url, 'now', '--', 'true']);
  expect(next.code, next.stderr).toBe(0);
  await old.waitFor('"lost"');
  writeFileSync(join(dir, 'stop'), '');
  expect((await old.result).code).toBe(76);
});

test('a closed key forced again says so; --now then opens it', async () => {
  const dir = tempDir();
  const old = hold('twice', { redis: server.url, dir, flags: ['--ttl', '6s', '--on-lost', 'ignore'] });
  await childPid(dir);
  expect((await dlock(['release', '--force', '--redis', server.url, 'twice'])).code).toBe(0);
  const again = await dlock(['release', '--force', '--redis', server.url, 'twice']);
  expect(again.code).toBe(0);
  expect(again.stdout).toMatch(
    /^twice: closed by release --force \(was held by \S+ pid \d+\).*; closed to new holders for /,
  );
  const opened = await dlock(['release', '--force', '--now', '--redis', server.url, 'twice']);
  expect(opened.stdout).toMatch(/; open to new holders now\n$/);
  expect(await admin.exists('dlock:{twice}')).toBe(0);
  await old.waitFor('"lost"');
  writeFileSync(join(dir, 'stop'), '');
  expect((await old.result).code).toBe(76);
});

test('status --json of a closed key: the top level and each instance agree (held false, closed true)', async () => {
  const taken = await dlock(['acquire', '--no-keeper', '--ttl', '30s', '--redis', server.url, 'closed-json']);
  expect(taken.code).toBe(0);
  expect((await dlock(['release', '--force', '--redis', server.url, 'closed-json'])).code).toBe(0);
  const status = JSON.parse((await dlock(['status', '--json', '--redis', server.url, 'closed-json'])).stdout);
  expect(status).toMatchObject({ held: false, closed: true });
  expect(status.instances).toHaveLength(1);
  expect(status.instances[0]).toMatchObject({ held: false, closed: true, holder: { closed: true } });
});

test('a run whose lock was forced before its first renewal: its release says release --force removed it, not "expired or taken"', async () => {
  for (const flags of [[], ['--slots', '2'], ['--shared']]) {
    const dir = tempDir();
    const run = hold('forced-quiet', { redis: server.url, dir, flags: ['--ttl', '30s', ...flags] });
    await childPid(dir);
    expect((await dlock(['release', '--force', '--redis', server.url, 'forced-quiet'])).code).toBe(0);
    writeFileSync(join(dir, 'stop'), '');
    const result = await run.result;
    // The exit status stays the command's (exit-codes.md: only a loss seen while it ran is 76).
    expect(result.code, flags.join(' ')).toBe(0);
    const released = onlyEvent(result.stderr, 'released');
    expect(released, flags.join(' ')).toMatchObject({ released: false, reason: 'not-ours', forced: true });
    expect(released.message).toMatch(
      /^forced-quiet was removed by dlock release --force before its release \(fence \d+\)/,
    );
    expect(released.message).not.toMatch(/expired|taken/);
    expect((await dlock(['release', '--force', '--now', '--redis', server.url, 'forced-quiet'])).code).toBe(0);
  }
});

test('a hash without an expiry (not written by dlock) is deleted, never closed forever', async () => {
  await admin.hset('dlock:{forged}', 'owner', 'x', 'host', 'h', 'pid', '1');
  const forced = await dlock(['release', '--force', '--redis', server.url, 'forged']);
  expect(forced.code).toBe(0);
  expect(forced.stdout).not.toMatch(/closed to new holders/);
  expect(await admin.exists('dlock:{forged}')).toBe(0);
});

describe('closed for every kind of holder: --shared and --slots are refused while closed, admitted once it opens', () => {
  test.each([
    ['shared', ['--shared']],
    ['slots', ['--slots', '3']],
  ])('%s', async (key, mode) => {
    const dir = tempDir();
    const old = hold(key, { redis: server.url, dir, flags: [...mode, '--ttl', '4s'] });
    await childPid(dir);
    const forced = await dlock(['release', '--force', '--log-format', 'json', '--redis', server.url, key]);
    expect(forced.code, forced.stderr).toBe(0);
    const closure = onlyEvent(forced.stderr, 'force-released');
    expect(closure.closed_for_ms).toBeGreaterThan(1_000);

    // -n of the same kind (two slots of three are free) and of another kind: busy, and says why.
    for (const asked of [mode, []]) {
      const busy = await dlock(['run', '-n', ...asked, '--redis', server.url, key, '--', 'echo', 'RAN']);
      expect(busy.code, busy.stderr).toBe(75);
      expect(busy.stdout).toBe('');
      expect(busy.stderr).toMatch(
        /^dlock: \S+ is busy \([^\n]*, closed to new holders for \S+ more \(closed by release --force [^\n]*\n$/,
      );
    }
    const status = await dlock(['status', '--redis', server.url, key]);
    expect(status.stdout).toMatch(/^\S+: held[^\n]*; closed to new holders by release --force for \S+ more\n/);
    const list = await dlock(['status', '--redis', server.url]);
    expect(list.stdout).toMatch(new RegExp(`^${key} \\((slot \\d+|shared), closed by release --force\\) `, 'm'));

    // A waiter of the same kind waits until the closure ends, then enters.
    const next = await dlock([
      'run',
      ...mode,
      '--wait',
      '15s',
      '--log-format',
      'json',
      '--redis',
      server.url,
      key,
      '--',
      'true',
    ]);
    expect(next.code, next.stderr).toBe(0);
    const acquired = onlyEvent(next.stderr, 'acquired');
    expect(acquired.ts_ms).toBeGreaterThanOrEqual(closure.ts_ms + Number(closure.closed_for_ms) - 500);
    expect((await old.result).code).toBe(76);
  });

  test('--now opens a closed --shared key at once', async () => {
    const dir = tempDir();
    const old = hold('shared-now', {
      redis: server.url,
      dir,
      flags: ['--shared', '--ttl', '6s', '--on-lost', 'ignore'],
    });
    await childPid(dir);
    expect((await dlock(['release', '--force', '--redis', server.url, 'shared-now'])).code).toBe(0);
    const opened = await dlock(['release', '--force', '--now', '--redis', server.url, 'shared-now']);
    expect(opened.code, opened.stdout).toBe(0);
    expect(opened.stdout).toMatch(
      /^shared-now: closed by release --force \(was held by .*; open to new holders now\n$/,
    );
    const next = await dlock(['run', '-n', '--shared', '--redis', server.url, 'shared-now', '--', 'true']);
    expect(next.code, next.stderr).toBe(0);
    await old.waitFor('"lost"');
    writeFileSync(join(dir, 'stop'), '');
    expect((await old.result).code).toBe(76);
  });
});
