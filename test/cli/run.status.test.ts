// `dlock status` and `dlock release --force` against a lock a `dlock run` holds (docs/reference/commands.md).

import { hostname } from 'node:os';
import { describe, expect, test } from 'vitest';
import { dlock } from '../helpers/cli.js';
import { RedisServer } from '../../support/redis-server.mjs';
import { hold, HOLD, type Held, isAlive, onlyEvent, signalsSeen, waitForDeath } from '../fixtures/observe.js';
import { useRedisServer } from '../helpers/server.js';

let redis: RedisServer;
useRedisServer((server) => (redis = server));

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Stop the holder; it releases and exits 0. */
async function release(held: Held): Promise<void> {
  held.stop();
  expect((await held.result).code).toBe(0);
}

describe('dlock status <key>', () => {
  test('held: exit 0; the text names host, pid, command, since, ttl and fence', async () => {
    const held = hold('st-held', { redis: redis.url, flags: ['-t', '5s'] });
    const child = await held.child();
    const result = await dlock(['status', '--redis', redis.url, 'st-held']);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const text = result.stdout;
    expect(text).toMatch(/^st-held: held\n/);
    expect(text).toMatch(new RegExp(`host +${escape(hostname())}\\n`));
    expect(text).toMatch(new RegExp(`pid +${held.process.pid}\\n`));
    expect(text).toMatch(new RegExp(`command +${escape(`${HOLD} ${held.dir}`)}\\n`));
    expect(text).toMatch(/since +\d{4}-\d\d-\d\dT[\d:.]+Z \(.+ ago\)\n/);
    expect(text).toMatch(/ttl left +[\d.]+m?s of 5s\n/);
    expect(text).toMatch(new RegExp(`fence +${child.env.DLOCK_FENCING_TOKEN}\\n`));
    await release(held);
  });

  test('held: --json has the same facts, and never the owner token', async () => {
    const held = hold('st-json', { redis: redis.url, flags: ['-t', '5s'] });
    const child = await held.child();
    const result = await dlock(['status', '--redis', redis.url, '--json', 'st-json']);
    expect(result.code).toBe(0);
    const status = JSON.parse(result.stdout);
    expect(status).toMatchObject({
      key: 'st-json',
      held: true,
      holder: {
        host: hostname(),
        pid: held.process.pid,
        cmd: `${HOLD} ${held.dir}`,
        ttl_ms: 5_000,
        fence: child.env.DLOCK_FENCING_TOKEN,
      },
    });
    expect(status.holder.ttl_left_ms).toBeGreaterThan(0);
    expect(status.holder.ttl_left_ms).toBeLessThanOrEqual(5_000);
    expect(Date.parse(status.holder.since)).toBeLessThanOrEqual(Date.now());
    const token = child.env.DLOCK_TOKEN;
    expect(result.stdout).not.toContain(token);
    await release(held);
  });

  test('free: exit 1, text and --json', async () => {
    const text = await dlock(['status', '--redis', redis.url, 'st-free']);
    expect(text).toMatchObject({ code: 1, stdout: 'st-free: free\n', stderr: '' });
    const json = await dlock(['status', '--redis', redis.url, '--json', 'st-free']);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ key: 'st-free', held: false, holder: null });
  });

  test('free again once the holder is done', async () => {
    const held = hold('st-done', { redis: redis.url });
    await held.child();
    expect((await dlock(['status', '--redis', redis.url, 'st-done'])).code).toBe(0);
    await release(held);
    expect((await dlock(['status', '--redis', redis.url, 'st-done'])).code).toBe(1);
  });

  test('a bad key is a usage error (64)', async () => {
    const result = await dlock(['status', '--redis', redis.url, 'a{b']);
    expect(result.code).toBe(64);
    expect(result.stderr).toMatch(/^dlock: [^\n]*\n$/);
  });
});

describe('dlock status without a key', () => {
  test('lists every held lock under the prefix (exit 0); exit 1 when there is none', async () => {
    const other = await RedisServer.start();
    try {
      const empty = await dlock(['status', '--redis', other.url]);
      expect(empty.code).toBe(1);
      expect(empty.stdout).toMatch(/no locks held/);

      const holders = ['list-a', 'list/b'].map((key) => hold(key, { redis: other.url }));
      await Promise.all(holders.map((holder) => holder.child()));
      // A lock under another prefix is not listed.
      const elsewhere = hold('list-c', { redis: other.url, flags: ['--prefix', 'other:'] });
      await elsewhere.child();

      const text = await dlock(['status', '--redis', other.url]);
      expect(text.code).toBe(0);
      const rows = text.stdout.trim().split('\n');
      expect(rows[0]).toMatch(/^KEY +HOST +PID +FOR +TTL LEFT +FENCE +COMMAND$/);
      expect(rows.slice(1).map((row) => row.split(/ +/)[0])).toEqual(['list-a', 'list/b']);
      expect(rows[1]).toContain(String(holders[0].process.pid));

      const json = await dlock(['status', '--redis', other.url, '--json']);
      expect(json.code).toBe(0);
      const list = JSON.parse(json.stdout) as { key: string; pid: number; host: string; fence: string }[];
      expect(list.map((l) => [l.key, l.pid, l.host])).toEqual([
        ['list-a', holders[0].process.pid, hostname()],
        ['list/b', holders[1].process.pid, hostname()],
      ]);

      const otherPrefix = await dlock(['status', '--redis', other.url, '--prefix', 'other:', '--json']);
      expect(JSON.parse(otherPrefix.stdout).map((l: { key: string }) => l.key)).toEqual(['list-c']);

      for (const holder of [...holders, elsewhere]) holder.stop();
      expect((await Promise.all([...holders, elsewhere].map((h) => h.result))).map((r) => r.code)).toEqual([0, 0, 0]);
    } finally {
      await other.close();
    }
  });
});

describe('dlock release', () => {
  test('without --force: 64, and the lock stays', async () => {
    const held = hold('rel-noforce', { redis: redis.url });
    await held.child();
    const result = await dlock(['release', '--redis', redis.url, 'rel-noforce']);
    expect(result.code).toBe(64);
    expect(result.stderr).toMatch(/^dlock: [^\n]*--force[^\n]*\n$/);
    expect((await dlock(['status', '--redis', redis.url, 'rel-noforce'])).code).toBe(0);
    await release(held);
  });

  test('--force prints whom it removed; the holder then loses it (76) and its child is terminated', async () => {
    const held = hold('rel-force', { redis: redis.url, flags: ['-t', '3s'] });
    const child = await held.child();
    const result = await dlock(['release', '--force', '--redis', redis.url, 'rel-force']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`held by ${hostname()} pid ${held.process.pid}`);
    expect(result.stdout).toContain(`fence ${child.env.DLOCK_FENCING_TOKEN}`);
    expect(result.stdout).toContain(`${HOLD} ${held.dir}`);
    // Closed to new holders until the removed holder's lease runs out (see release-force.test.ts);
    // a 3s TTL leaves time to look before it does.
    const closed = await dlock(['status', '--redis', redis.url, 'rel-force']);
    expect(closed.code).toBe(0);
    expect(closed.stdout).toMatch(/^rel-force: closed by release --force/);

    await waitForDeath(child.pid);
    const holder = await held.result;
    expect(holder.code).toBe(76);
    expect(signalsSeen(held.dir)).toEqual(['TERM']);
    expect(onlyEvent(holder.stderr, 'lost').reason).toBe('refused');
    expect(isAlive(child.pid)).toBe(false);
    // The counter survives a forced release: the next holder's token is higher.
    const next = await dlock([
      'run',
      '--redis',
      redis.url,
      '--wait',
      '5s',
      'rel-force',
      '--',
      'sh',
      '-c',
      'echo $DLOCK_FENCING_TOKEN',
    ]);
    expect(BigInt(next.stdout.trim())).toBeGreaterThan(BigInt(child.env.DLOCK_FENCING_TOKEN));
  });

  test('--force on a free lock: exit 1, nothing released', async () => {
    const result = await dlock(['release', '--force', '--redis', redis.url, 'rel-free']);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/not held/);
  });
});
