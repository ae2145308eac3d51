// dlock metrics on data anyone who can write to Redis could forge (issue 24, issue 11's "trust
// nothing"): history entries (which feed no counter) and a totals hash with counts that are not
// numbers, huge or negative, unknown reasons, buckets out of order, an ID that holds no date; lock names with quotes, newlines, escapes and
// thousands of characters. The output always passes `promtool check metrics`, holds no NaN and no
// negative observation, keeps its label sets closed, and cuts every key label.

import type { Redis } from 'ioredis';
import { expect, test } from 'vitest';
import { dlock } from '../helpers/cli.js';
import { expectPromtoolPasses, samples } from '../helpers/metrics.js';
import { RedisServer } from '../../support/redis-server.mjs';
import { useRedisServer } from '../helpers/server.js';

let redis: RedisServer;
let admin: Redis;
useRedisServer((server) => {
  redis = server;
  admin = server.client();
});

async function metrics(...args: string[]): Promise<string> {
  const result = await dlock(['metrics', '--redis', redis.url, ...args]);
  expect(result).toMatchObject({ code: 0, stderr: '' });
  expectPromtoolPasses(result.stdout);
  expect(result.stdout).not.toMatch(/NaN|Inf(?!")/);
  for (const [id, value] of samples(result.stdout)) expect([id, Number(value) >= 0]).toEqual([id, true]);
  return result.stdout;
}

test('forged history entries count nothing; only a dated success there is found (a key counted before totals)', async () => {
  const key = 'm-forged';
  const stream = `dlock:{${key}}:history`;
  const add = (...fields: string[]) => admin.xadd(stream, '*', ...fields);
  for (const waited of ['abc', '-5', '1e300', '99999999999999999999', '', '1500'])
    await add('event', 'acquired', 'waited_ms', waited);
  await add('event', 'acquired'); // no waited_ms at all
  await add('event', 'released', 'exit', '0', 'held_ms', 'NaN');
  await add('event', 'released', 'exit', '99999999999', 'held_ms', '2500');
  await add('event', 'busy', 'why', 'evil"\n\\');
  await add('event', 'lost', 'why', '\u202e');
  await add('event', 'forced\nfake_metric 1');
  await add('event', 'done', 'until_ms', 'soon');
  // A stream ID far beyond any date: the entry counts, it has no time.
  await admin.xadd(stream, '9000000000000000-1', 'event', 'released', 'exit', '0', 'held_ms', '1');

  const text = await metrics(key);
  const value = (id: string) => samples(text).get(id);
  expect(value(`dlock_lock_history_entries{key="${key}",prefix="dlock:"}`)).toBe('14');
  // The counters come from the key's totals, which the scripts keep: a forged stream adds nothing.
  expect(value(`dlock_lock_acquisitions_total{key="${key}",prefix="dlock:"}`)).toBe('0');
  expect(value(`dlock_lock_wait_seconds_count{key="${key}",prefix="dlock:"}`)).toBe('0');
  expect(value(`dlock_lock_releases_total{key="${key}",prefix="dlock:",exit_class="ok"}`)).toBe('0');
  expect(text).not.toContain('fake_metric');
  // The last success with a date: the ordinary entry, not the dateless one after it.
  const last = Number(value(`dlock_lock_last_success_timestamp_seconds{key="${key}",prefix="dlock:"}`));
  expect(Math.abs(last - Date.now() / 1000)).toBeLessThan(60);
});

test('a forged totals hash: a count that is not a whole number is left out (unknown), said once, and counted', async () => {
  const key = 'm-forged-totals';
  await admin.hset(`dlock:{${key}}:totals`, {
    acquired: '7',
    forced: 'abc',
    'turned_away:held': '-5',
    'turned_away:evil"\n': '9',
    'lost:expired': '1e300',
    'lost:taken': '1.5',
    'released:ok': '99999999999999999999',
    'released:error': '3',
    'released:lost': '1\n\x1b[2Jdlock: fake',
    'wait:count': '2',
    'wait:sum_ms': '20',
    'wait:le:10': '5',
    'wait:le:100': '1',
    'hold:count': '1',
    'hold:sum_ms': 'NaN',
    'hold:le:5000': '1',
    last_success_ms: '9'.repeat(5000),
    'forced\nfake_metric 1': '1',
  });
  const result = await dlock(['metrics', '--redis', redis.url, key]);
  expect(result.code).toBe(0);
  expectPromtoolPasses(result.stdout);
  const text = result.stdout;
  const value = (id: string) => samples(text).get(id);
  const labels = `key="${key}",prefix="dlock:"`;
  expect(value(`dlock_lock_acquisitions_total{${labels}}`)).toBe('7');
  expect(value(`dlock_lock_releases_total{${labels},exit_class="error"}`)).toBe('3');
  // Not 0 (a forged counter could "fall" to it): no sample at all, Prometheus' way to say unknown.
  for (const id of [
    `dlock_lock_forced_total{${labels}}`,
    `dlock_lock_turned_away_total{${labels},reason="held"}`,
    `dlock_lock_losses_total{${labels},reason="expired"}`,
    `dlock_lock_losses_total{${labels},reason="taken"}`,
    `dlock_lock_releases_total{${labels},exit_class="ok"}`,
    `dlock_lock_releases_total{${labels},exit_class="lost"}`,
    `dlock_lock_hold_seconds_count{${labels}}`,
    `dlock_lock_hold_seconds_bucket{le="5",${labels}}`,
  ])
    expect([id, value(id)]).toEqual([id, undefined]);
  // Valid numbers out of order are made consistent: each bucket at least the one before it.
  expect(value(`dlock_lock_wait_seconds_bucket{le="0.1",${labels}}`)).toBe('5');
  expect(value(`dlock_lock_wait_seconds_count{${labels}}`)).toBe('5');
  expect(value(`dlock_lock_last_success_timestamp_seconds{${labels}}`)).toBeUndefined();
  expect(text).not.toContain('fake_metric');
  // Counted, by where the collection went, and said once on stderr: the key and each field, escaped.
  expect(value('dlock_metrics_counts_invalid{prefix="dlock:"}')).toBe('8');
  expect(result.stderr.split('\n')).toHaveLength(2);
  expect(result.stderr).toMatch(
    /^dlock: 8 counts left out, not whole numbers \(forged\?\): m-forged-totals: forced "abc", /,
  );
  expect(result.stderr).toContain('released:lost "1\\x0a\\x1b[2Jdlock: fake"');
  expect(result.stderr).toContain('last_success_ms "9999');
  expect(result.stderr.length).toBeLessThan(1200);
  // Every reason and class label is one of the closed list.
  const reasons = new Set([...text.matchAll(/(?:reason|exit_class)="([^"]*)"/g)].map((match) => match[1]));
  expect([...reasons].every((reason) => /^[a-z_]+$/.test(reason))).toBe(true);
  expect(text).not.toContain('evil');
});

test('forged lock names: escaped, cut, kept apart, and promtool still passes', async () => {
  const prefix = 'mevil:';
  const long = 'x'.repeat(5000);
  const names = ['q"uo\nte\\back', '\x1b[2J\u202e\u2028', `${long}-a`, `${long}-b`];
  for (const name of names) {
    await admin.hset(`${prefix}{${name}}`, {
      owner: 'o',
      fence: '1',
      host: 'h',
      pid: '1',
      cmd: 'c',
      since_ms: String(Date.now()),
      ttl_ms: '600000',
    });
    await admin.pexpire(`${prefix}{${name}}`, 600_000);
  }
  const text = await metrics('--prefix', prefix);
  const held = [...samples(text)].filter(([id]) => id.startsWith('dlock_lock_held{'));
  expect(held).toHaveLength(4);
  for (const [id, value] of held) {
    expect(value).toBe('1');
    expect(id.length).toBeLessThan(300);
  }
  expect(text).toContain('dlock_lock_held{key="q\\"uo\\\\x0ate\\\\back",prefix="mevil:"} 1');
  expect(text).toContain('dlock_lock_held{key="\\\\x1b[2J\\\\u202e\\\\u2028",prefix="mevil:"} 1');
  expect(held.filter(([id]) => id.includes('#2'))).toHaveLength(1);
});
