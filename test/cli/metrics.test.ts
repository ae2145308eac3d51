// dlock metrics (issue 24): a scripted scenario against a real redis-server whose metrics match
// exactly; `promtool check metrics` on every output; a real Prometheus scraping --listen and
// answering a PromQL query; a real Pushgateway receiving --push; --textfile written atomically;
// bad option values exit 64 naming the option, with passwords masked.

import { spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { dlock } from '../helpers/cli.js';
import { freePort, RedisServer } from '../../support/redis-server.mjs';
import { waitUntil } from '../../support/wait-until.mjs';
import { hold, spawnDlock, tempDir } from '../fixtures/observe.js';
import { inLine, runIn } from '../helpers/line.js';
import {
  expectPromtoolPasses,
  samples,
  startPrometheus,
  startPushgateway,
  type HttpServer,
} from '../helpers/metrics.js';
import { useRedisServer } from '../helpers/server.js';

let redis: RedisServer;
useRedisServer((server) => (redis = server));
const servers: HttpServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((server) => server.stop()));
});

/** `dlock metrics` to stdout: exit 0, nothing on stderr, and promtool accepts it. */
async function metrics(...args: string[]): Promise<string> {
  const result = await dlock(['metrics', '--redis', redis.url, ...args]);
  expect(result).toMatchObject({ code: 0, stderr: '' });
  expectPromtoolPasses(result.stdout);
  return result.stdout;
}

/** The series of `key` whose name starts with `name`, label set -> value. */
function series(text: string, key: string, name: string): Record<string, string> {
  const own = [...samples(text)].filter(([id]) => id.startsWith(`${name}{key="${key}"`));
  return Object.fromEntries(own.map(([id, value]) => [id.slice(name.length), value]));
}

test('a scripted scenario: held, holders, slots, waiters and every counter match exactly', async () => {
  const key = 'm-scenario';
  const run = (...args: string[]) => dlock(['run', '--redis', redis.url, ...args]);
  expect((await run(key, '--', 'true')).code).toBe(0);
  expect((await run(key, '--', 'sh', '-c', 'exit 3')).code).toBe(3);
  // A 4s lease: the holder must keep renewing through six dlock starts on a loaded machine (a loss
  // by expiry would change the counts below).
  const holder = hold(key, { redis: redis.url, flags: ['-t', '4s'] });
  await holder.child();
  expect((await run('-n', key, '--', 'true')).code).toBe(75);
  const waiter = runIn(redis.url, key, [], ['true']);
  await inLine(waiter);
  const slots = 'm-slots';
  const slotHolders = [hold(slots, { redis: redis.url, flags: ['--slots', '3'] })];
  slotHolders.push(hold(slots, { redis: redis.url, flags: ['--slots', '3'] }));
  await Promise.all(slotHolders.map((held) => held.child()));

  const live = await metrics();
  expect(series(live, key, 'dlock_lock_held')).toEqual({ '{key="m-scenario"}': '1' });
  const gauge = (text: string, name: string, which = key) => samples(text).get(`${name}{key="${which}"}`);
  expect(gauge(live, 'dlock_lock_holders')).toBe('1');
  expect(gauge(live, 'dlock_lock_slots')).toBe('1');
  expect(gauge(live, 'dlock_lock_waiters')).toBe('1');
  expect(gauge(live, 'dlock_lock_holders', slots)).toBe('2');
  expect(gauge(live, 'dlock_lock_slots', slots)).toBe('3');
  expect(gauge(live, 'dlock_lock_waiters', slots)).toBe('0');
  expect(gauge(live, 'dlock_lock_acquisitions_total', slots)).toBe('2');

  // The waiter leaves the line (SIGTERM); the holder's lock is taken by release --force: lost.
  waiter.process.kill('SIGTERM');
  expect((await waiter.result).code).toBe(143);
  expect((await dlock(['release', '--redis', redis.url, '--force', key])).code).toBe(0);
  expect((await holder.result).code).toBe(76);
  // release --force keeps the removed hold closed until its lease (-t 4s) runs out.
  await waitUntil(`${key} to be free`, async () => (await dlock(['status', '--redis', redis.url, key])).code === 1, {
    everyMs: 100,
  });
  slotHolders.forEach((held) => held.stop());
  await Promise.all(slotHolders.map((held) => held.result));

  // Named: a free key is reported only when asked for.
  const after = await metrics(key);
  expect(gauge(after, 'dlock_lock_held')).toBe('0');
  expect(gauge(after, 'dlock_lock_holders')).toBe('0');
  expect(gauge(after, 'dlock_lock_waiters')).toBe('0');
  expect(gauge(after, 'dlock_lock_acquisitions_total')).toBe('3');
  expect(gauge(after, 'dlock_lock_forced_total')).toBe('1');
  // acquired ×3, released ×2, busy, left, forced, lost.
  expect(gauge(after, 'dlock_lock_history_entries')).toBe('9');
  expect(series(after, key, 'dlock_lock_turned_away_total')).toEqual({
    '{key="m-scenario",reason="held"}': '1',
    '{key="m-scenario",reason="line"}': '0',
    '{key="m-scenario",reason="wait"}': '0',
    '{key="m-scenario",reason="done"}': '0',
    '{key="m-scenario",reason="other"}': '0',
  });
  expect(series(after, key, 'dlock_lock_losses_total')).toEqual({
    '{key="m-scenario",reason="expired"}': '0',
    '{key="m-scenario",reason="forced"}': '1',
    '{key="m-scenario",reason="taken"}': '0',
    '{key="m-scenario",reason="other"}': '0',
  });
  expect(series(after, key, 'dlock_lock_releases_total')).toEqual({
    '{key="m-scenario",exit_class="ok"}': '1',
    '{key="m-scenario",exit_class="error"}': '1',
    '{key="m-scenario",exit_class="cannot_run"}': '0',
    '{key="m-scenario",exit_class="signal"}': '0',
    '{key="m-scenario",exit_class="lost"}': '0',
    '{key="m-scenario",exit_class="unknown"}': '0',
    '{key="m-scenario",exit_class="none"}': '0',
    '{key="m-scenario",exit_class="other"}': '0',
  });
  expect(gauge(after, 'dlock_lock_wait_seconds_count')).toBe('3');
  expect(gauge(after, 'dlock_lock_hold_seconds_count')).toBe('2');
  expect(samples(after).get('dlock_lock_wait_seconds_bucket{le="+Inf",key="m-scenario"}')).toBe('3');
  const since = Number(gauge(after, 'dlock_lock_seconds_since_success'));
  expect(since).toBeGreaterThanOrEqual(0);
  expect(since).toBeLessThan(60);
  const last = Number(gauge(after, 'dlock_lock_last_success_timestamp_seconds'));
  expect(Math.abs(last - Date.now() / 1000)).toBeLessThan(60);
  // Not named and not held: left out.
  expect(gauge(after, 'dlock_lock_held', slots)).toBeUndefined();
  expect(samples(after).get('dlock_metrics_locks_unreadable')).toBe('0');
});

test('--prefix: only the locks under it', async () => {
  const held = hold('m-prefixed', { redis: redis.url, flags: ['--prefix', 'other:'] });
  await held.child();
  const text = await metrics('--prefix', 'other:');
  expect(samples(text).get('dlock_lock_held{key="m-prefixed"}')).toBe('1');
  expect([...samples(text).keys()].filter((id) => id.startsWith('dlock_lock_held{'))).toEqual([
    'dlock_lock_held{key="m-prefixed"}',
  ]);
  expect(samples(await metrics()).get('dlock_lock_held{key="m-prefixed"}')).toBeUndefined();
  held.stop();
  await held.result;
});

test('--textfile: written whole through a renamed temporary file, none left behind', async () => {
  const dir = tempDir();
  const path = join(dir, 'dlock.prom');
  const result = await dlock(['metrics', '--redis', redis.url, '--textfile', path, 'm-textfile']);
  expect(result).toMatchObject({ code: 0, stdout: '', stderr: '' });
  const text = readFileSync(path, 'utf8');
  expectPromtoolPasses(text);
  expect(samples(text).get('dlock_lock_held{key="m-textfile"}')).toBe('0');
  expect(readdirSync(dir)).toEqual(['dlock.prom']);
  expect(statSync(path).mode & 0o777).toBe(0o644);
  const missing = await dlock(['metrics', '--redis', redis.url, '--textfile', join(dir, 'no', 'such.prom')]);
  expect(missing.code).toBe(73);
  expect(missing.stderr).toMatch(/^dlock: --textfile .*no\/such\.prom: cannot write it \(ENOENT\)\n$/);
  expect(existsSync(join(dir, 'no'))).toBe(false);
});

test('--listen: a real Prometheus scrapes it and a PromQL query returns the series; SIGTERM exits 0', async () => {
  const held = hold('m-listen', { redis: redis.url, flags: ['--slots', '2'] });
  await held.child();
  const port = await freePort();
  const serving = spawnDlock(['metrics', '--redis', redis.url, '--log-format', 'json', '--listen', String(port)]);
  const endpoint = `http://127.0.0.1:${port}/metrics`;
  const scraped = await waitUntil('dlock metrics --listen to answer', async () => {
    const response = await fetch(endpoint);
    return response.ok ? response.text() : undefined;
  });
  expectPromtoolPasses(scraped);
  expect(serving.stderr()).toContain(`"event":"listening","url":"${endpoint}"`);
  const prometheus = await startPrometheus(`127.0.0.1:${port}`);
  servers.push(prometheus);
  const query = encodeURIComponent('dlock_lock_slots{key="m-listen"}');
  const result = await waitUntil(
    'Prometheus to have scraped dlock',
    async () => {
      const answer = (await (await fetch(`${prometheus.url}/api/v1/query?query=${query}`)).json()) as {
        data: { result: { metric: Record<string, string>; value: [number, string] }[] };
      };
      return answer.data.result.length > 0 ? answer.data.result : undefined;
    },
    { timeoutMs: 30_000, everyMs: 200 },
  );
  expect(result).toEqual([
    {
      metric: { __name__: 'dlock_lock_slots', instance: `127.0.0.1:${port}`, job: 'dlock', key: 'm-listen' },
      value: [expect.any(Number), '2'],
    },
  ]);
  // Fresh data per scrape: the release shows at the next one.
  held.stop();
  await held.result;
  await waitUntil('the release to show at a scrape', async () => {
    const text = await (await fetch(endpoint)).text();
    return samples(text).get('dlock_lock_held{key="m-listen"}') === undefined;
  });
  expect((await fetch(`http://127.0.0.1:${port}/other`)).status).toBe(404);
  serving.process.kill('SIGTERM');
  expect((await serving.result).code).toBe(0);
});

test('--listen: a Redis that is down answers 503 and the endpoint stays up', async () => {
  const port = await freePort();
  const serving = spawnDlock(['metrics', '--redis', `redis://127.0.0.1:${await freePort()}`, '--listen', `${port}`]);
  const response = await waitUntil('dlock metrics --listen to answer', () =>
    fetch(`http://127.0.0.1:${port}/metrics`).catch(() => undefined),
  );
  expect(response.status).toBe(503);
  await serving.waitFor('dlock: scrape failed: ');
  serving.process.kill('SIGINT');
  expect((await serving.result).code).toBe(0);
});

test('--push: a real Pushgateway shows the group, job dlock by prefix and host', async () => {
  const gateway = await startPushgateway();
  servers.push(gateway);
  const pushed = await dlock(['metrics', '--redis', redis.url, '--push', gateway.url, 'm-push']);
  expect(pushed).toMatchObject({ code: 0, stdout: '', stderr: '' });
  const text = await (await fetch(`${gateway.url}/metrics`)).text();
  const labels = `host="${hostname()}",instance="",job="dlock",key="m-push",prefix="dlock:"`;
  expect(text.split('\n').filter((line) => line.startsWith('dlock_lock_held{'))).toEqual([
    `dlock_lock_held{${labels}} 0`,
  ]);
  const groups = (await (await fetch(`${gateway.url}/api/v1/metrics`)).json()) as {
    data: { labels: Record<string, string> }[];
  };
  expect(groups.data.map((group) => group.labels)).toEqual([{ job: 'dlock', prefix: 'dlock:', host: hostname() }]);
});

test('--push answered 404 "404 page not found" (Go\'s text): the status once, the reason after it', async () => {
  // What a Pushgateway (Go's http.NotFound) answers to a path it does not serve.
  const server = createServer((request, response) => {
    request.resume();
    response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('404 page not found\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const result = await dlock(['metrics', '--redis', redis.url, '--push', `http://127.0.0.1:${port}/wrong`]);
    expect(result.stderr).toBe(
      `dlock: --push http://127.0.0.1:${port}/wrong: the Pushgateway answered 404 (page not found)\n`,
    );
    expect(result.code).toBe(69);
  } finally {
    server.close();
  }
});

test('--push to nothing: 69, the password masked', async () => {
  const url = `http://user:s3cret@127.0.0.1:${await freePort()}`;
  const result = await dlock(['metrics', '--redis', redis.url, '--push', url]);
  expect(result.code).toBe(69);
  expect(result.stderr).toMatch(/^dlock: --push http:\/\/user:\*\*\*@127\.0\.0\.1:\d+: cannot reach the Pushgateway/);
  expect(result.stderr).not.toContain('s3cret');
});

test.each([
  [['--listen', 'abc'], '--listen: expected a port'],
  [['--listen', '70000'], '--listen: expected a port'],
  [['--listen', '[nope]:9464'], '--listen: '],
  [['--push', 'ftp://x'], '--push: expected an http:// or https:// URL'],
  [['--push', 'not a url'], '--push: not a URL'],
  [['--push', 'http://u:pw@h:9091', '--listen', '9464'], '--push and --listen: choose one'],
  [['--textfile', ''], '--textfile: not a file'],
  [['bad key'], 'key: must be printable'],
])('%j: 64 with one line naming it', async (args, message) => {
  const result = await dlock(['metrics', '--redis', redis.url, ...args]);
  expect(result.code).toBe(64);
  expect(result.stdout).toBe('');
  expect(result.stderr.split('\n')).toHaveLength(2);
  expect(result.stderr).toContain(`dlock: ${message}`);
  expect(result.stderr).not.toContain('pw@');
});

test('a password in --push is masked in the usage error too', async () => {
  const result = await dlock(['metrics', '--redis', redis.url, '--push', 'gopher://u:hunter2@h']);
  expect(result.code).toBe(64);
  expect(result.stderr).not.toContain('hunter2');
});

/** The alert docs/guides/monitoring.md gives for a job that has not succeeded in 25 hours. */
const NO_SUCCESS_RULE = `groups:
  - name: dlock
    rules:
      - alert: DlockNoSuccess25h
        expr: time() - dlock_lock_last_success_timestamp_seconds > 25 * 3600
        labels:
          severity: warning
        annotations:
          summary: 'dlock: no successful run of {{ $labels.key }} in 25 hours'
`;

test('the "no success in 25 h" alert rule: promtool checks it and its unit test passes', () => {
  const dir = tempDir();
  writeFileSync(join(dir, 'dlock.rules.yml'), NO_SUCCESS_RULE);
  // nightly succeeded at t=0 and never again; hourly succeeds every hour (its timestamp moves on).
  writeFileSync(
    join(dir, 'test.yml'),
    `rule_files: [dlock.rules.yml]
evaluation_interval: 1m
tests:
  - interval: 1h
    input_series:
      - series: 'dlock_lock_last_success_timestamp_seconds{key="nightly"}'
        values: '0x30'
      - series: 'dlock_lock_last_success_timestamp_seconds{key="hourly"}'
        values: '0+3600x30'
    alert_rule_test:
      - eval_time: 24h59m
        alertname: DlockNoSuccess25h
        exp_alerts: []
      - eval_time: 25h1m
        alertname: DlockNoSuccess25h
        exp_alerts:
          - exp_labels: { severity: warning, key: nightly }
            exp_annotations: { summary: 'dlock: no successful run of nightly in 25 hours' }
`,
  );
  const check = spawnSync('promtool', ['check', 'rules', 'dlock.rules.yml'], { cwd: dir, encoding: 'utf8' });
  expect(check.status, check.stdout + check.stderr).toBe(0);
  const unit = spawnSync('promtool', ['test', 'rules', 'test.yml'], { cwd: dir, encoding: 'utf8' });
  expect(unit.status, unit.stdout + unit.stderr).toBe(0);
});
