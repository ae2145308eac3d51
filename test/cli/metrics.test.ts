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
  sortedLabels,
  startNodeExporter,
  startPrometheus,
  startPushgateway,
  type HttpServer,
} from '../helpers/metrics.js';
import { useRedisServer } from '../helpers/server.js';
import { blocksOf } from '../helpers/transcript.js';
import { lockKeys } from '../../src/backends/redis/lock/keys.js';
import { enterScript } from '../../src/backends/redis/lock/line.js';
import { releaseScript } from '../../src/backends/redis/lock/release.js';
import { entering } from '../helpers/scripts.js';

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
  expect(series(live, key, 'dlock_lock_held')).toEqual({ '{key="m-scenario",prefix="dlock:"}': '1' });
  const gauge = (text: string, name: string, which = key) =>
    samples(text).get(`${name}{key="${which}",prefix="dlock:"}`);
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
    '{key="m-scenario",prefix="dlock:",reason="held"}': '1',
    '{key="m-scenario",prefix="dlock:",reason="line"}': '0',
    '{key="m-scenario",prefix="dlock:",reason="wait"}': '0',
    '{key="m-scenario",prefix="dlock:",reason="done"}': '0',
    '{key="m-scenario",prefix="dlock:",reason="superseded"}': '0',
    '{key="m-scenario",prefix="dlock:",reason="other"}': '0',
  });
  expect(series(after, key, 'dlock_lock_losses_total')).toEqual({
    '{key="m-scenario",prefix="dlock:",reason="expired"}': '0',
    '{key="m-scenario",prefix="dlock:",reason="forced"}': '1',
    '{key="m-scenario",prefix="dlock:",reason="taken"}': '0',
    '{key="m-scenario",prefix="dlock:",reason="other"}': '0',
  });
  expect(series(after, key, 'dlock_lock_releases_total')).toEqual({
    '{key="m-scenario",prefix="dlock:",exit_class="ok"}': '1',
    '{key="m-scenario",prefix="dlock:",exit_class="error"}': '1',
    '{key="m-scenario",prefix="dlock:",exit_class="cannot_run"}': '0',
    '{key="m-scenario",prefix="dlock:",exit_class="signal"}': '0',
    '{key="m-scenario",prefix="dlock:",exit_class="lost"}': '0',
    '{key="m-scenario",prefix="dlock:",exit_class="unknown"}': '0',
    '{key="m-scenario",prefix="dlock:",exit_class="none"}': '0',
    '{key="m-scenario",prefix="dlock:",exit_class="other"}': '0',
  });
  expect(gauge(after, 'dlock_lock_wait_seconds_count')).toBe('3');
  expect(gauge(after, 'dlock_lock_hold_seconds_count')).toBe('2');
  expect(samples(after).get('dlock_lock_wait_seconds_bucket{le="+Inf",key="m-scenario",prefix="dlock:"}')).toBe('3');
  const since = Number(gauge(after, 'dlock_lock_last_success_age_seconds'));
  expect(since).toBeGreaterThanOrEqual(0);
  expect(since).toBeLessThan(60);
  const last = Number(gauge(after, 'dlock_lock_last_success_timestamp_seconds'));
  expect(Math.abs(last - Date.now() / 1000)).toBeLessThan(60);
  // Not named and not held: left out.
  expect(gauge(after, 'dlock_lock_held', slots)).toBeUndefined();
  expect(samples(after).get('dlock_metrics_locks_unreadable{prefix="dlock:"}')).toBe('0');
  expect(samples(after).get('dlock_metrics_collect_success{prefix="dlock:"}')).toBe('1');
  const collected = Number(samples(after).get('dlock_metrics_collect_timestamp_seconds{prefix="dlock:"}'));
  expect(Math.abs(collected - Date.now() / 1000)).toBeLessThan(60);
});

test("each counter's HELP names every value its reason or exit_class label takes", async () => {
  const text = await metrics('m-help-values');
  const helps = new Map([...text.matchAll(/^# HELP (\S+) (.*)$/gm)].map(([, name, help]) => [name, help]));
  const missing: string[] = [];
  for (const [id] of samples(text))
    for (const [, label, value] of id.matchAll(/(reason|exit_class)="([^"]*)"/g)) {
      const name = id.replace(/\{.*$/, '');
      if (!new RegExp(`\\b${value}\\b`).test(helps.get(name) ?? '')) missing.push(`${name} ${label}=${value}`);
    }
  expect(missing).toEqual([]);
});

test('one lock that cannot be read: "could not read 1 lock", the others written, 69', async () => {
  await redis.client().set('dlock:{m-one-unreadable}', 'not a lock');
  const result = await dlock(['metrics', '--redis', redis.url, '--only', 'm-one-unreadable', 'm-readable']);
  expect(result.code).toBe(69);
  expect(result.stderr).toMatch(/^dlock: could not read 1 lock under dlock: \(m-one-unreadable: .*\)/);
  expect(samples(result.stdout).get('dlock_lock_held{key="m-readable",prefix="dlock:"}')).toBe('0');
});

test('--listen on a port already taken: 73 (where the metrics go cannot be made, as --textfile), listed in --help', async () => {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = taken.address() as AddressInfo;
    const result = await dlock(['metrics', '--redis', redis.url, '--listen', String(port)]);
    expect(result).toMatchObject({
      code: 73,
      stderr: `dlock: --listen 127.0.0.1:${port}: cannot listen there (EADDRINUSE)\n`,
    });
  } finally {
    taken.close();
  }
  const help = (await dlock(['metrics', '--help'])).stdout;
  expect(help).toMatch(/^ {2}73 +.*--listen/m);
});

test('--prefix: only the locks under it', async () => {
  const held = hold('m-prefixed', { redis: redis.url, flags: ['--prefix', 'other:'] });
  await held.child();
  const text = await metrics('--prefix', 'other:');
  expect(samples(text).get('dlock_lock_held{key="m-prefixed",prefix="other:"}')).toBe('1');
  expect([...samples(text).keys()].filter((id) => id.startsWith('dlock_lock_held{'))).toEqual([
    'dlock_lock_held{key="m-prefixed",prefix="other:"}',
  ]);
  expect(samples(await metrics()).get('dlock_lock_held{key="m-prefixed",prefix="dlock:"}')).toBeUndefined();
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
  expect(samples(text).get('dlock_lock_held{key="m-textfile",prefix="dlock:"}')).toBe('0');
  expect(readdirSync(dir)).toEqual(['dlock.prom']);
  expect(statSync(path).mode & 0o777).toBe(0o644);
  const missing = await dlock(['metrics', '--redis', redis.url, '--textfile', join(dir, 'no', 'such.prom')]);
  expect(missing.code).toBe(73);
  expect(missing.stderr).toMatch(/^dlock: --textfile .*no\/such\.prom: cannot write it \(ENOENT\)\n$/);
  expect(existsSync(join(dir, 'no'))).toBe(false);
});

test('--textfile with Redis down: the file says dlock_metrics_collect_success 0 (no stale values), exit 69', async () => {
  const dir = tempDir();
  const path = join(dir, 'team.prom');
  expect((await dlock(['metrics', '--redis', redis.url, '--textfile', path, 'm-down'])).code).toBe(0);
  expect(samples(readFileSync(path, 'utf8')).get('dlock_lock_held{key="m-down",prefix="dlock:"}')).toBe('0');
  const down = await dlock([
    'metrics',
    '--redis',
    `redis://127.0.0.1:${await freePort()}`,
    '--textfile',
    path,
    'm-down',
  ]);
  expect(down.code).toBe(69);
  expect(down.stderr).toMatch(/^dlock: [^\n]+\n$/);
  const text = readFileSync(path, 'utf8');
  expectPromtoolPasses(text);
  expect([...samples(text)]).toEqual([
    ['dlock_metrics_collect_success{prefix="dlock:",file="team.prom"}', '0'],
    ['dlock_metrics_collect_timestamp_seconds{prefix="dlock:",file="team.prom"}', expect.stringMatching(/^\d/)],
  ]);
  expect(readdirSync(dir)).toEqual(['team.prom']);
});

test('two teams, two --textfile --only files on one host: no series in both (node_exporter would refuse it)', async () => {
  const held = hold('m-team-a', { redis: redis.url });
  await held.child();
  const dir = tempDir();
  for (const [file, key] of [
    ['a.prom', 'm-team-a'],
    ['b.prom', 'm-team-b'],
  ])
    expect(await dlock(['metrics', '--redis', redis.url, '--only', '--textfile', join(dir, file), key])).toMatchObject({
      code: 0,
      stderr: '',
    });
  const [a, b] = ['a.prom', 'b.prom'].map((file) => samples(readFileSync(join(dir, file), 'utf8')));
  expect([...a.keys()].filter((id) => b.has(id))).toEqual([]);
  expect(a.get('dlock_lock_held{key="m-team-a",prefix="dlock:"}')).toBe('1');
  expect(b.get('dlock_lock_held{key="m-team-b",prefix="dlock:"}')).toBe('0');
  // --only: the lock team a holds is not in team b's file.
  expect([...b.keys()].filter((id) => id.includes('m-team-a'))).toEqual([]);
  expect(b.get('dlock_metrics_collect_success{prefix="dlock:",file="b.prom"}')).toBe('1');
  held.stop();
  await held.result;
});

test('two prefixes, the same key, one file each: a real node_exporter serves every series of both files', async () => {
  const key = 'm-two-prefixes';
  for (const prefix of ['teamA:', 'teamB:'])
    expect((await dlock(['run', '--redis', redis.url, '--prefix', prefix, key, '--', 'true'])).code).toBe(0);
  const dir = tempDir();
  for (const [prefix, file] of [
    ['teamA:', 'a.prom'],
    ['teamB:', 'b.prom'],
  ]) {
    const args = ['metrics', '--redis', redis.url, '--prefix', prefix, '--only', '--textfile', join(dir, file), key];
    expect(await dlock(args)).toMatchObject({ code: 0, stderr: '' });
  }
  const written = ['a.prom', 'b.prom'].flatMap((file) => [...samples(readFileSync(join(dir, file), 'utf8')).keys()]);
  // node_exporter reads every *.prom of the directory at each scrape; a series given twice is
  // dropped (logged "was collected before with the same name and label values") and the scrape
  // still answers 200 with node_textfile_scrape_error 0: so every written series must come out.
  const exporter = await startNodeExporter(dir);
  servers.push(exporter);
  const scraped = await (await fetch(`${exporter.url}/metrics`)).text();
  expect(samples(scraped).get('node_textfile_scrape_error')).toBe('0');
  const served = [...samples(scraped).keys()].filter((id) => id.startsWith('dlock_')).map(sortedLabels);
  expect(exporter.log()).not.toContain('collected before');
  expect(served.sort()).toEqual(written.map(sortedLabels).sort());
  // Each per-lock series says which prefix it belongs to.
  expect(written).toContain(`dlock_lock_held{key="${key}",prefix="teamA:"}`);
  expect(written).toContain(`dlock_lock_held{key="${key}",prefix="teamB:"}`);
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
  const query = encodeURIComponent('dlock_lock_slots{key="m-listen",prefix="dlock:"}');
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
      metric: {
        __name__: 'dlock_lock_slots',
        instance: `127.0.0.1:${port}`,
        job: 'dlock',
        key: 'm-listen',
        prefix: 'dlock:',
      },
      value: [expect.any(Number), '2'],
    },
  ]);
  // Fresh data per scrape: the release shows at the next one.
  held.stop();
  await held.result;
  await waitUntil('the release to show at a scrape', async () => {
    const text = await (await fetch(endpoint)).text();
    return samples(text).get('dlock_lock_held{key="m-listen",prefix="dlock:"}') === undefined;
  });
  expect((await fetch(`http://127.0.0.1:${port}/other`)).status).toBe(404);
  serving.process.kill('SIGTERM');
  expect((await serving.result).code).toBe(0);
});

test('--listen: a Redis that is down answers dlock_metrics_collect_success 0 and the endpoint stays up', async () => {
  const port = await freePort();
  const serving = spawnDlock(['metrics', '--redis', `redis://127.0.0.1:${await freePort()}`, '--listen', `${port}`]);
  const response = await waitUntil('dlock metrics --listen to answer', () =>
    fetch(`http://127.0.0.1:${port}/metrics`).catch(() => undefined),
  );
  expect(response.status).toBe(200);
  const text = await response.text();
  expectPromtoolPasses(text);
  expect(samples(text).get('dlock_metrics_collect_success{prefix="dlock:"}')).toBe('0');
  expect(Number(samples(text).get('dlock_metrics_collect_timestamp_seconds{prefix="dlock:"}'))).toBeGreaterThan(0);
  expect([...samples(text).keys()].filter((id) => id.startsWith('dlock_lock_'))).toEqual([]);
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

test("the tests' Pushgateway keeps what it is pushed in memory, not in Debian's file shared with the machine", async () => {
  const gateway = await startPushgateway();
  servers.push(gateway);
  const status = (await (await fetch(`${gateway.url}/api/v1/status`)).json()) as {
    data: { flags: Record<string, string> };
  };
  expect(status.data.flags['persistence.file']).toBe('');
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
  [['--textfile', 'x.txt'], '--textfile: the name must end in .prom'],
  [['--only'], '--only: name the keys to report'],
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

/** The alert rules docs/guides/monitoring.md gives: its text block that defines DlockNoSuccess25h. */
function guideRules(): string {
  const guide = 'docs/guides/monitoring.md';
  const blocks = blocksOf(guide, readFileSync(guide, 'utf8'));
  const rules = blocks.filter((block) => block.lang === 'text' && block.body.includes('alert: DlockNoSuccess25h'));
  expect(rules).toHaveLength(1);
  return `${rules[0].body}\n`;
}

test("the monitoring guide's alert rules: promtool checks them and their unit tests pass", () => {
  const dir = tempDir();
  writeFileSync(join(dir, 'dlock.rules.yml'), guideRules());
  // nightly succeeded at t=0 and never again; hourly succeeds every hour (its timestamp moves on).
  // team-a's file failed from 10m on (Redis down); team-b's was last written at 20m (its cron stopped).
  writeFileSync(
    join(dir, 'test.yml'),
    `rule_files: [dlock.rules.yml]
evaluation_interval: 1m
tests:
  - interval: 1h
    input_series:
      - series: 'dlock_lock_last_success_timestamp_seconds{key="nightly",prefix="dlock:"}'
        values: '0x30'
      - series: 'dlock_lock_last_success_timestamp_seconds{key="hourly",prefix="dlock:"}'
        values: '0+3600x30'
    alert_rule_test:
      - eval_time: 24h59m
        alertname: DlockNoSuccess25h
        exp_alerts: []
      - eval_time: 25h1m
        alertname: DlockNoSuccess25h
        exp_alerts:
          - exp_labels: { severity: warning, key: nightly, prefix: 'dlock:' }
            exp_annotations: { summary: 'dlock: no successful run of nightly (prefix dlock:) in 25 hours' }
  - interval: 1m
    input_series:
      - series: 'dlock_metrics_collect_success{prefix="dlock:",file="a.prom"}'
        values: '1x9 0x30'
      - series: 'dlock_metrics_collect_timestamp_seconds{prefix="dlock:",file="a.prom"}'
        values: '0+60x40'
      - series: 'dlock_metrics_collect_success{prefix="dlock:",file="b.prom"}'
        values: '1x40'
      - series: 'dlock_metrics_collect_timestamp_seconds{prefix="dlock:",file="b.prom"}'
        values: '0+60x20 1200x20'
    alert_rule_test:
      - eval_time: 14m
        alertname: DlockMetricsFailed
        exp_alerts: []
      - eval_time: 16m
        alertname: DlockMetricsFailed
        exp_alerts:
          - exp_labels: { severity: warning, prefix: 'dlock:', file: a.prom }
            exp_annotations: { summary: 'dlock metrics could not read Redis (prefix dlock:, a.prom) for 5m' }
      - eval_time: 34m
        alertname: DlockMetricsStale
        exp_alerts: []
      - eval_time: 36m
        alertname: DlockMetricsStale
        exp_alerts:
          - exp_labels: { severity: warning, prefix: 'dlock:', file: b.prom }
            exp_annotations: { summary: 'dlock metrics not written for 15m (prefix dlock:, b.prom)' }
`,
  );
  const check = spawnSync('promtool', ['check', 'rules', 'dlock.rules.yml'], { cwd: dir, encoding: 'utf8' });
  expect(check.status, check.stdout + check.stderr).toBe(0);
  const unit = spawnSync('promtool', ['test', 'rules', 'test.yml'], { cwd: dir, encoding: 'utf8' });
  expect(unit.status, unit.stdout + unit.stderr).toBe(0);
});

/**
 * Every counter and histogram series of each scrape (by its # TYPE), fed to `promtool test rules` as
 * one sample a minute: an alert on `resets()` over them must not fire (a counter that fell).
 */
function expectNoCounterFalls(scrapes: string[]): void {
  const counted = new Set<string>();
  for (const text of scrapes)
    for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (counter|histogram)$/gm)) if (type) counted.add(name);
  const ids = new Set(
    scrapes.flatMap((text) =>
      [...samples(text).keys()].filter((id) => {
        const name = id.replace(/\{.*$/, '');
        return counted.has(name) || counted.has(name.replace(/_(bucket|sum|count)$/, ''));
      }),
    ),
  );
  expect(ids.size).toBeGreaterThan(0);
  const dir = tempDir();
  writeFileSync(
    join(dir, 'monotonic.rules.yml'),
    `groups:
  - name: monotonic
    rules:
      - alert: DlockCounterFell
        expr: resets(label_replace({__name__=~"dlock_.+"}, "name", "$1", "__name__", "(.+)")[1h:1m]) > 0
`,
  );
  const series = [...ids].map((id) => {
    const values = scrapes.map((text) => samples(text).get(id) ?? '_').join(' ');
    return `      - series: '${id}'\n        values: '${values}'\n`;
  });
  writeFileSync(
    join(dir, 'test.yml'),
    `rule_files: [monotonic.rules.yml]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
${series.join('')}    alert_rule_test:
      - eval_time: ${scrapes.length}m
        alertname: DlockCounterFell
        exp_alerts: []
`,
  );
  const unit = spawnSync('promtool', ['test', 'rules', 'test.yml'], { cwd: dir, encoding: 'utf8' });
  expect(unit.status, unit.stdout + unit.stderr).toBe(0);
}

test('counters never fall: 1200+ events, scraped across the 1000 the history keeps; promtool sees no reset', async () => {
  const key = 'm-monotonic';
  const keys = lockKeys('dlock:', key);
  const client = redis.client();
  const enter = (owner: string, join = true) =>
    enterScript.run(client, keys, entering(owner, undefined, { join }), 5000);
  const release = (owner: string) =>
    releaseScript.run(client, keys, { owner, notify: true, record: { exitStatus: '0', oncePerMs: 0 } }, 5000);
  // The same scripts, KEYS and ARGV `dlock run` sends on one Redis, called here without a process
  // each (1200 dlock starts would take minutes); real dlock runs go between them.
  const scrapes: string[] = [];
  const scrape = async () => scrapes.push(await metrics(key));
  for (let batch = 0; batch < 4; batch++) {
    for (let i = 0; i < 100; i++) {
      expect((await enter(`a${batch}-${i}`)).acquired).toBe(true);
      expect(await release(`a${batch}-${i}`)).toBe('released');
    }
    expect((await dlock(['run', '--redis', redis.url, key, '--', 'true'])).code).toBe(0);
    await scrape();
  }
  // The reproduction: held with --no-keeper, then 400 runs turned away (-n).
  expect((await dlock(['acquire', '--redis', redis.url, '--no-keeper', '--ttl', '2m', key])).code).toBe(0);
  for (let batch = 0; batch < 4; batch++) {
    for (let i = 0; i < 100; i++) expect((await enter(`b${batch}-${i}`, false)).acquired).toBe(false);
    expect((await dlock(['run', '--redis', redis.url, '-n', '-E', '0', key, '--', 'true'])).code).toBe(0);
    await scrape();
  }
  expect((await client.xlen(keys.history)).valueOf()).toBe(1000);
  expectNoCounterFalls(scrapes);
  const last = samples(scrapes.at(-1)!);
  expect(last.get(`dlock_lock_acquisitions_total{key="${key}",prefix="dlock:"}`)).toBe('405');
  expect(last.get(`dlock_lock_turned_away_total{key="${key}",prefix="dlock:",reason="held"}`)).toBe('404');
  expect(last.get(`dlock_lock_releases_total{key="${key}",prefix="dlock:",exit_class="ok"}`)).toBe('404');
  expect(last.get(`dlock_lock_wait_seconds_count{key="${key}",prefix="dlock:"}`)).toBe('405');
}, 60_000);
