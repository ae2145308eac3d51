// --ping (docs/reference/options.md): healthchecks-style pings against a local server that
// implements healthchecks' ping API (test/helpers/ping-server.ts) and a real redis-server. A ping
// runs beside the command: a hanging or absent monitor never delays the command's start beyond
// the bound, nor changes dlock's exit status.

import { afterEach, describe, expect, test } from 'vitest';
import { BINARY, cleanEnv, dlock, start } from '../helpers/cli.js';
import { PingServer, type PingBehaviour } from '../helpers/ping-server.js';
import { RedisServer } from '../../support/redis-server.mjs';
import { childPid, events, hold, onlyEvent, tempDir } from '../fixtures/observe.js';
import { useRedisServer } from '../helpers/server.js';
import { makePki, type Pki } from '../helpers/tls.js';
import { existsSync, readFileSync } from 'node:fs';

let redis: RedisServer;
useRedisServer((server) => (redis = server));

const servers: PingServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function pingServer(behaviour?: PingBehaviour): Promise<PingServer> {
  const server = await PingServer.start(behaviour);
  servers.push(server);
  return server;
}

const run = (key: string, flags: string[], command: string[], env: Record<string, string> = {}) =>
  dlock(['run', '--redis', redis.url, ...flags, key, '--', ...command], { env: cleanEnv(env) });

describe('the sequence of pings', () => {
  test('exit 0: <url>/start, then <url>, with a JSON summary', async () => {
    const server = await pingServer();
    const result = await run('ping-ok', ['--ping', server.url()], ['true']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(server.paths()).toEqual(['/start', '']);
    expect(server.requests.map(({ method }) => method)).toEqual(['POST', 'POST']);
    const version = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;
    expect(server.requests.map(({ userAgent }) => userAgent)).toEqual([`dlock/${version}`, `dlock/${version}`]);
    const [started, ended] = server.bodies();
    expect(started).toMatchObject({ key: 'ping-ok', fence: expect.any(String), host: expect.any(String) });
    expect(ended).toMatchObject({
      key: 'ping-ok',
      fence: started.fence,
      exit_status: 0,
      waited_ms: expect.any(Number),
    });
    expect(ended.held_ms).toBeGreaterThanOrEqual(0);
  });

  test('a run id (?rid=, a UUID) on each ping: the same on /start and the end of a run, another for the next run', async () => {
    const server = await pingServer();
    expect((await run('ping-rid', ['--ping', server.url()], ['true'])).code).toBe(0);
    expect((await run('ping-rid', ['--ping', server.url()], ['sh', '-c', 'exit 3'])).code).toBe(3);
    expect(server.paths()).toEqual(['/start', '', '/start', '/3']);
    const [first, firstEnd, second, secondEnd] = server.rids();
    expect(first).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(firstEnd).toBe(first);
    expect(secondEnd).toBe(second);
    expect(second).not.toBe(first);
  });

  test('overlapping runs (--slots 2) pair up by their run ids', async () => {
    const server = await pingServer();
    const first = start(
      ['run', '--redis', redis.url, '--slots', '2', '--ping', server.url(), 'ping-rid2', '--', 'sleep', '30'],
      {
        env: cleanEnv(),
      },
    );
    await waitUntil(() => server.paths().length === 1);
    expect((await run('ping-rid2', ['--slots', '2', '--ping', server.url()], ['sh', '-c', 'exit 4'])).code).toBe(4);
    first.process.kill('SIGTERM');
    await first.result;
    const pairs = server.requests.map(({ path, rid }) => [path.slice('/ping/check'.length), rid]);
    expect(pairs).toHaveLength(4);
    const [outer, inner] = [pairs[0][1], pairs[1][1]];
    expect(outer).not.toBe(inner);
    expect(pairs).toEqual([
      ['/start', outer],
      ['/start', inner],
      ['/4', inner],
      ['/143', outer],
    ]);
  });

  test('exit 3: <url>/start, then <url>/3; DLOCK_PING_URL works as --ping', async () => {
    const server = await pingServer();
    const result = await run('ping-fail', [], ['sh', '-c', 'exit 3'], { DLOCK_PING_URL: server.url() });
    expect(result.code).toBe(3);
    expect(server.paths()).toEqual(['/start', '/3']);
    expect(server.bodies()[1]).toMatchObject({ exit_status: 3 });
  });

  test('busy: nothing by default; --ping-busy sends <url>/log', async () => {
    const dir = tempDir();
    const holder = hold('ping-busy', { redis: redis.url, dir });
    await childPid(dir);
    const server = await pingServer();
    expect((await run('ping-busy', ['-n', '--ping', server.url('quiet')], ['true'])).code).toBe(75);
    expect(server.paths('quiet')).toEqual([]);
    expect((await run('ping-busy', ['-n', '--ping', server.url('loud'), '--ping-busy'], ['true'])).code).toBe(75);
    expect(server.paths('loud')).toEqual(['/log']);
    expect(server.bodies('loud')[0]).toMatchObject({ key: 'ping-busy', event: 'busy', exit_status: 75 });
    // -E 0 (skip quietly) is still a turn-away, not a success.
    expect((await run('ping-busy', ['-n', '-E', '0', '--ping', server.url('e0'), '--ping-busy'], ['true'])).code).toBe(
      0,
    );
    expect(server.paths('e0')).toEqual(['/log']);
    holder.process.kill('SIGTERM');
    await holder.result;
  });

  test('lost lock: <url>/start, then <url>/76', async () => {
    const server = await pingServer();
    const holder = hold('ping-lost', { redis: redis.url, flags: ['-t', '600ms', '--ping', server.url()] });
    await holder.child();
    await redis.client().del('dlock:{ping-lost}');
    const result = await holder.result;
    expect(result.code).toBe(76);
    expect(server.paths()).toEqual(['/start', '/76']);
    expect(server.bodies()[1]).toMatchObject({ key: 'ping-lost', exit_status: 76 });
  });

  test('acquire: the keeper pings /start when held, and <url> when the section releases with --exit-status 0', async () => {
    const server = await pingServer();
    const script = `eval "$("$1" acquire --redis ${redis.url} --ping ${server.url()} ping-acquire)" && echo in
      "$1" release --redis ${redis.url} --exit-status 0 ping-acquire`;
    const shell = await start([], { via: ['sh', '-c', script, 'sh'] }).result;
    expect(shell).toMatchObject({ code: 0, stdout: 'in\n' });
    await waitUntil(() => server.paths().length >= 2);
    expect(server.paths()).toEqual(['/start', '']);
    expect(server.bodies()[1]).toMatchObject({ key: 'ping-acquire', exit_status: 0 });
    expect(await lastRelease('ping-acquire')).toMatchObject({ exit: 0 });
  });
});

describe("a section's exit status (dlock acquire): pings, history, hooks and metrics agree; unknown is never success", () => {
  /** `sh -c script` with $1 the dlock under test and $R the Redis URL; its result once the keeper pinged twice. */
  async function section(server: PingServer, script: string, pings = 2): Promise<void> {
    const shell = start([], {
      via: ['sh', '-c', script, 'sh'],
      env: cleanEnv({ R: redis.url, DLOCK_REDIS_URL: redis.url }),
    });
    await shell.result;
    await waitUntil(() => server.paths().length >= pings);
  }

  test('a script that exits 3 without a release: no success ping (<url>/log, unknown), history says unknown', async () => {
    const server = await pingServer();
    const key = 'section-unknown';
    await section(server, `eval "$("$1" acquire --redis "$R" --ping ${server.url()} ${key})" || exit\nexit 3`);
    expect(server.paths()).toEqual(['/start', '/log']);
    expect(server.bodies()[1]).toMatchObject({ key, exit_status: 'unknown' });
    expect(server.bodies()[1].message).toMatch(/exit status is unknown/);
    expect(await lastRelease(key)).toMatchObject({ exit: null });
  });

  test('dlock release without --exit-status: unknown too', async () => {
    const server = await pingServer();
    const key = 'section-release-unknown';
    await section(
      server,
      `eval "$("$1" acquire --redis "$R" --ping ${server.url()} ${key})" || exit\n"$1" release ${key}`,
    );
    expect(server.paths()).toEqual(['/start', '/log']);
    expect(await lastRelease(key)).toMatchObject({ exit: null });
  });

  test('dlock release --exit-status 3 (a trap on EXIT): <url>/3 and history exit 3', async () => {
    const server = await pingServer();
    const key = 'section-three';
    const trap = `trap '"$1" release --exit-status $? ${key}' EXIT`;
    await section(server, `eval "$("$1" acquire --redis "$R" --ping ${server.url()} ${key})" || exit\n${trap}\nexit 3`);
    expect(server.paths()).toEqual(['/start', '/3']);
    expect(server.bodies()[1]).toMatchObject({ key, exit_status: 3 });
    expect(await lastRelease(key)).toMatchObject({ exit: 3 });
  });

  test('--max-hold ends the section: <url>/124 and history exit 124', async () => {
    const server = await pingServer();
    const key = 'section-max-hold';
    const work = "trap 'kill $! 2>/dev/null; exit 124' TERM; sleep 600 & wait";
    const acquire = `"$1" acquire --redis "$R" --ttl 3s --max-hold 1s --ping ${server.url()} ${key}`;
    await section(server, `eval "$(${acquire})" || exit\n${work}`);
    expect(server.paths()).toEqual(['/start', '/124']);
    expect(server.bodies()[1]).toMatchObject({ key, exit_status: 124 });
    expect(await lastRelease(key)).toMatchObject({ exit: 124, reason: 'max-hold' });
  });

  test('--on-event hooks see the status: 3 from release --exit-status, unknown otherwise', async () => {
    const dir = tempDir();
    const hook = `--on-event 'echo "$DLOCK_EVENT $DLOCK_EVENT_EXIT" >> ${dir}/events'`;
    const script = (key: string, end: string) => `eval "$("$1" acquire --redis "$R" ${hook} ${key})" || exit\n${end}`;
    for (const [key, end] of [
      ['hook-three', '"$1" release --exit-status 3 hook-three'],
      ['hook-unknown', 'exit 3'],
    ]) {
      start([], {
        via: ['sh', '-c', script(key, end), 'sh'],
        env: cleanEnv({ R: redis.url, DLOCK_REDIS_URL: redis.url }),
      });
    }
    const lines = () => (existsSync(`${dir}/events`) ? readFileSync(`${dir}/events`, 'utf8') : '');
    await waitUntil(
      () =>
        lines()
          .split('\n')
          .filter((line) => line.startsWith('released')).length >= 2,
    );
    expect(
      lines()
        .split('\n')
        .filter((line) => line.startsWith('released'))
        .sort(),
    ).toEqual(['released 3', 'released unknown']);
  });

  test("metrics' last success is not moved by a section of unknown status", async () => {
    const key = 'section-metrics';
    expect((await run(key, [], ['true'])).code).toBe(0);
    const lastSuccess = async () => {
      const { stdout } = await dlock(['metrics', '--redis', redis.url, key], { env: cleanEnv() });
      return stdout.split('\n').find((line) => line.startsWith('dlock_lock_last_success_timestamp_seconds'));
    };
    const before = await lastSuccess();
    expect(before).toBeDefined();
    const server = await pingServer();
    await section(server, `eval "$("$1" acquire --redis "$R" --ping ${server.url()} ${key})" || exit\nexit 0`);
    expect(await lastRelease(key)).toMatchObject({ exit: null });
    expect(await lastSuccess()).toBe(before);
  });
});

/** The newest `released` entry of `key`'s history. */
async function lastRelease(key: string): Promise<Record<string, unknown> | undefined> {
  const { stdout } = await dlock(['history', '--redis', redis.url, '--json', key], { env: cleanEnv() });
  return (JSON.parse(stdout) as Record<string, unknown>[]).find((entry) => entry.event === 'released');
}

describe('a monitor that hangs or is down', () => {
  test('hanging: the command starts at once, the exit status is kept, dlock exits within the bound', async () => {
    const server = await pingServer({ kind: 'hang' });
    const started = Date.now();
    const result = await run(
      'ping-hang',
      ['--ping', server.url(), '--ping-timeout', '2s', '--log-format', 'json', '-v'],
      ['sh', '-c', 'date +%s%N; exit 3'],
    );
    const endedAt = Date.now();
    const tookMs = endedAt - started;
    expect(result.code).toBe(3);
    const acquiredAt = onlyEvent(result.stderr, 'acquired').ts_ms;
    const commandAt = Number(result.stdout.trim()) / 1e6;
    console.log(
      `hanging monitor: the command started ${Math.round(commandAt - acquiredAt)}ms after acquired; ` +
        `dlock took ${tookMs}ms with --ping-timeout 2s`,
    );
    expect(commandAt - acquiredAt).toBeLessThan(500);
    // From the lock held to dlock's exit (its start-up left out: slow on a loaded machine): the bound and a margin.
    expect(endedAt - acquiredAt).toBeLessThan(2_000 + 1_500);
    expect(events(result.stderr, 'ping-failed').length).toBeGreaterThanOrEqual(1);
  });

  test('hanging: each ping that did not get through is one warning line, the last one too', async () => {
    const server = await pingServer({ kind: 'hang' });
    const flags = ['--ping', server.url(), '--ping-timeout', '1s'];
    const result = await run('ping-hang-all', flags, ['sh', '-c', 'sleep 0.3; exit 3']);
    expect(result.code).toBe(3);
    // /start times out within the bound; the final ping, sent after it, is still out when the
    // bound (1s from the command's exit) runs out, and is reported then.
    expect(result.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^dlock: ping http:\/\/127\.0\.0\.1:\d+\/ping\/check\/start failed: timed out$/),
      expect.stringMatching(/^dlock: ping http:\/\/127\.0\.0\.1:\d+\/ping\/check\/3 failed: timed out$/),
    ]);
  });

  test('down: exit statuses unchanged, one warning line per ping, credentials masked', async () => {
    const server = await PingServer.down();
    const url = `http://monitor:s3cret@127.0.0.1:${server.port}/ping/x`;
    const ok = await run('ping-down', ['--ping', url], ['true']);
    expect(ok.code).toBe(0);
    expect(ok.stderr).toMatch(
      /^dlock: ping http:\/\/monitor:\*\*\*@127\.0\.0\.1:\d+\/ping\/x\/start failed: connection refused$/m,
    );
    expect(ok.stderr).not.toContain('s3cret');
    expect(ok.stderr.trim().split('\n')).toHaveLength(2);
    expect((await run('ping-down', ['--ping', url, '-q'], ['sh', '-c', 'exit 4'])).code).toBe(4);
  });

  test('down, a token in the query string: masked in the warning and the JSON event, other values kept', async () => {
    const server = await PingServer.down();
    const url = `http://127.0.0.1:${server.port}/ping/x?token=topsecret&api_key=k2y&plain=keep`;
    const result = await run('ping-query', ['--ping', url, '--log-format', 'json'], ['true']);
    expect(result.code).toBe(0);
    expect(result.stderr).not.toContain('topsecret');
    expect(result.stderr).not.toContain('k2y');
    const failed = events(result.stderr).filter((e) => e.event === 'ping-failed');
    expect(failed.length).toBeGreaterThan(0);
    for (const event of failed) {
      expect(event.url).toMatch(/\/ping\/x(\/start)?\?token=\*\*\*&api_key=\*\*\*&plain=keep(&rid=[0-9a-f-]{36})?$/);
      expect(event.message).toContain('token=***');
    }
  });

  test('a slow monitor (1s) is still answered: the pings arrive', async () => {
    const server = await pingServer({ kind: 'slow', ms: 1_000 });
    const result = await run('ping-slow', ['--ping', server.url()], ['true']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(server.paths()).toEqual(['/start', '']);
  });
});

describe('a password with a blank, a secret query: never shown, whatever the ping and the output (issue 31 review)', () => {
  // The success ping (<url>, no suffix) was printed as given, the others as URL serializes them
  // (%20): the masker split the raw one at the blank and showed both halves.
  const SECRETS = ['Qx7', 'Zr9', 'tok1', 'tok2', 'pwv9'];
  test.for(['text', 'json'])(
    '--log-format %s: /start, <url>, /3, /log (--ping-busy), and the hooks',
    async (format) => {
      const server = await PingServer.down();
      const dir = tempDir();
      const url = `http://u:Qx7 Zr9@127.0.0.1:${server.port}/ping/x?token=tok1 tok2&pw=pwv9`;
      const bare = `http://:Qx7 Zr9@127.0.0.1:${server.port}/ping/y`;
      const hook = `{ env | grep '^DLOCK_'; cat; echo; } >> '${dir}/hook.log' 2>&1; env | grep '^DLOCK_EVENT' >&2`;
      const flags = ['--log-format', format, '--on-event', hook];
      const key = `ping-mask-${format}`;
      const results = [
        await run(key, [...flags, '--ping', url], ['true']),
        await run(key, [...flags, '--ping', bare], ['true']),
        await run(key, [...flags, '--ping', url], ['sh', '-c', 'exit 3']),
      ];
      const holder = hold(key, { redis: redis.url, dir: tempDir() });
      await holder.child();
      results.push(await run(key, [...flags, '-n', '--ping-busy', '--ping', url], ['true']));
      holder.process.kill('SIGTERM');
      await holder.result;
      expect(results.map(({ code }) => code)).toEqual([0, 0, 3, 75]);
      const shown = results.map(({ stdout, stderr }) => stdout + stderr).join('\n');
      // Every outcome failed and was reported: /start, the success, /3 and /log.
      for (const suffix of ['/x/start', '/y/start', '/y ', '/x/3', '/x/log'])
        expect(shown.replace(/\?[^ "]*/g, ' ').replace(/(failed|",)/g, ' ')).toContain(suffix);
      const everything = shown + readFileSync(`${dir}/hook.log`, 'utf8');
      for (const secret of SECRETS) expect(everything).not.toContain(secret);
      expect(everything).toContain('token=***');
      expect(everything).toContain('pw=***');
    },
  );
});

describe('how a ping is sent', () => {
  test('credentials in the URL go as HTTP Basic authorization, not in the request', async () => {
    const server = await pingServer();
    const url = server.url('auth').replace('http://', 'http://monitor:s%40cret@');
    const result = await run('ping-auth', ['--ping', url], ['true']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(server.paths('auth')).toEqual(['/start', '']);
    const basic = `Basic ${Buffer.from('monitor:s@cret').toString('base64')}`;
    expect(server.requests.map(({ authorization }) => authorization)).toEqual([basic, basic]);
  });

  test('a 503 or a 408 is tried three times, a 404 once; each gives up with one warning naming the status', async () => {
    const busy = await pingServer({ kind: 'status', code: 503 });
    const unavailable = await run('ping-503', ['--ping', busy.url()], ['true']);
    expect(unavailable.code).toBe(0);
    expect(busy.paths()).toEqual(['/start', '/start', '/start', '', '', '']);
    expect(unavailable.stderr).toMatch(/^dlock: ping http:\/\/127\.0\.0\.1:\d+\/ping\/check\/start failed: HTTP 503$/m);
    expect(unavailable.stderr.trim().split('\n')).toHaveLength(2);

    // 408 Request Timeout: the monitor gave up waiting for the request, as healthchecks' proxies do; try again.
    const timedOut = await pingServer({ kind: 'status', code: 408 });
    const slow = await run('ping-408', ['--ping', timedOut.url()], ['true']);
    expect(slow.code).toBe(0);
    expect(timedOut.paths()).toEqual(['/start', '/start', '/start', '', '', '']);
    expect(slow.stderr).toMatch(/\/ping\/check failed: HTTP 408$/m);

    const missing = await pingServer({ kind: 'status', code: 404 });
    const notFound = await run('ping-404', ['--ping', missing.url()], ['sh', '-c', 'exit 5']);
    expect(notFound.code).toBe(5);
    expect(missing.paths()).toEqual(['/start', '/5']);
    expect(notFound.stderr).toMatch(/\/ping\/check\/5 failed: HTTP 404$/m);
  });

  test('redirects are followed as fetch follows them: a 308 repeats the POST, a 302 becomes a GET', async () => {
    for (const [code, method] of [
      [308, 'POST'],
      [302, 'GET'],
    ] as const) {
      const server = await pingServer({ kind: 'redirect', code, from: '/ping/moved', to: '/ping/here' });
      const result = await run('ping-moved', ['--ping', server.url('moved')], ['true']);
      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(server.paths('moved')).toEqual(['/start', '']);
      const arrived = server.requests.filter(({ path }) => path.startsWith('/ping/here'));
      expect(arrived.map(({ path, method }) => [path, method])).toEqual([
        ['/ping/here/start', method],
        ['/ping/here', method],
      ]);
      if (method === 'POST') expect(JSON.parse(arrived[1]!.body)).toMatchObject({ key: 'ping-moved', exit_status: 0 });
      else expect(arrived.map(({ body }) => body)).toEqual(['', '']);
    }
  });

  test('HTTP_PROXY: the binary sends through it (Bun honours it), the npm build goes direct (Node 20 does not)', async () => {
    const proxy = await pingServer();
    const env = { HTTP_PROXY: `http://127.0.0.1:${proxy.port}` };
    const result = await run(
      'ping-proxy',
      ['--ping', 'http://monitor.invalid/ping/x', '--ping-timeout', '2s'],
      ['true'],
      env,
    );
    expect(result.code).toBe(0);
    const asked = proxy.requests.map(({ path }) => path);
    if (BINARY) {
      expect(asked).toEqual(['http://monitor.invalid/ping/x/start', 'http://monitor.invalid/ping/x']);
      expect(result.stderr).toBe('');
    } else {
      expect(asked).toEqual([]);
      expect(result.stderr).toMatch(/^dlock: ping http:\/\/monitor\.invalid\/ping\/x\/start failed: /m);
    }
  });

  describe('over https', () => {
    let pki: Pki;
    afterEach(() => pki?.remove());

    test('a monitor whose CA is trusted (NODE_EXTRA_CA_CERTS) gets both pings; an unknown CA is a warning', async () => {
      pki = makePki();
      const tls = { cert: readFileSync(pki.serverCert), key: readFileSync(pki.serverKey) };
      const secure = await PingServer.start({ kind: 'ok' }, tls);
      servers.push(secure);
      expect(secure.url()).toMatch(/^https:/);
      const trusted = await run('ping-tls', ['--ping', secure.url('trusted')], ['true'], {
        NODE_EXTRA_CA_CERTS: pki.ca,
      });
      expect(trusted).toMatchObject({ code: 0, stderr: '' });
      expect(secure.paths('trusted')).toEqual(['/start', '']);

      const unknown = await run('ping-tls', ['--ping', secure.url('unknown')], ['sh', '-c', 'exit 2']);
      expect(unknown.code).toBe(2);
      expect(secure.paths('unknown')).toEqual([]);
      expect(unknown.stderr).toMatch(
        /^dlock: ping https:\/\/127\.0\.0\.1:\d+\/ping\/unknown\/start failed: .*certificate/im,
      );
    });
  });
});

describe("--ping-output: the tail of the command's output as the final ping's body", () => {
  // stdout and stderr, then 3000 x's and an END line on stdout. (Two pipes: only what comes a moment apart keeps its order.)
  const noisy = [
    'sh',
    '-c',
    'echo out1; echo err1 >&2; sleep .2; head -c 3000 /dev/zero | tr "\\0" x; echo END; exit 3',
  ];

  test("--ping-output 1k: the last 1000 bytes as text; dlock's stdout and stderr carry the output unchanged", async () => {
    const server = await pingServer();
    const result = await run('ping-out', ['--ping', server.url(), '--ping-output', '1k'], noisy);
    expect(result.code).toBe(3);
    expect(result.stdout).toBe(`out1\n${'x'.repeat(3000)}END\n`);
    expect(result.stderr).toBe('err1\n');
    expect(server.paths()).toEqual(['/start', '/3']);
    const [started, ended] = server.requests;
    expect(started.contentType).toBe('application/json');
    expect(ended.contentType).toBe('text/plain; charset=utf-8');
    expect(ended.body).toBe(`${'x'.repeat(996)}END\n`);
  });

  test('an output shorter than the size is sent whole, stderr lines among stdout ones in the order they came', async () => {
    const server = await pingServer();
    const script = 'echo one; sleep .2; echo two >&2; sleep .2; echo three';
    const result = await run('ping-out2', ['--ping', server.url(), '--ping-output', '100k'], ['sh', '-c', script]);
    expect(result.code).toBe(0);
    expect(server.requests[1].body).toBe('one\ntwo\nthree\n');
  });

  test('a large output (5 MB through a pipe) reaches the caller byte for byte; the body is the last 100000 bytes', async () => {
    const server = await pingServer();
    const result = await run('ping-big', ['--ping', server.url(), '--ping-output', '100k'], ['seq', '1', '700000']);
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines).toHaveLength(700_001);
    expect(lines[699_999]).toBe('700000');
    expect(result.stdout).toBe(Array.from({ length: 700_000 }, (_, i) => `${i + 1}\n`).join(''));
    const body = server.requests[1].body;
    expect(Buffer.byteLength(body)).toBe(100_000);
    expect(result.stdout.endsWith(body)).toBe(true);
  });

  test("without --ping-output the final body stays the JSON summary, and the command has the caller's descriptors", async () => {
    const server = await pingServer();
    const result = await run('ping-noout', ['--ping', server.url()], ['sh', '-c', 'echo hi; exit 3']);
    expect(result).toMatchObject({ code: 3, stdout: 'hi\n' });
    expect(server.requests[1].contentType).toBe('application/json');
    expect(JSON.parse(server.requests[1].body)).toMatchObject({ exit_status: 3 });
  });
});

describe('bad input: 64, naming the option', () => {
  test.for([
    [['--ping', 'ftp://example.com/x'], /--ping: expected an http/],
    [['--ping', 'not a url'], /--ping: expected an http/],
    [['--ping-timeout', 'soon'], /--ping-timeout: not a duration/],
    [['--ping-timeout', '0'], /--ping-timeout: must be greater than zero/],
    [['--ping-timeout', '31s'], /--ping-timeout: must be at most 30s/],
    [['--ping-busy'], /--ping-busy needs --ping/],
    [['--ping-output', '1k'], /--ping-output needs --ping/],
    [['--ping', 'http://127.0.0.1:1/x', '--ping-output', '0'], /--ping-output: must be from 1 byte to 100k/],
    [['--ping', 'http://127.0.0.1:1/x', '--ping-output', '101k'], /--ping-output: must be from 1 byte to 100k/],
    [['--ping', 'http://127.0.0.1:1/x', '--ping-output', 'lots'], /--ping-output: not a size/],
    // Only the forms the docs give (4096, 10k): no spaces, no kb, no K.
    [['--ping', 'http://127.0.0.1:1/x', '--ping-output', ' 5'], /--ping-output: not a size/],
    [['--ping', 'http://127.0.0.1:1/x', '--ping-output', '10kb'], /--ping-output: not a size/],
    [['--ping', 'http://127.0.0.1:1/x', '--ping-output', '10K'], /--ping-output: not a size/],
  ] as const)('%j', async ([flags, message]) => {
    const result = await run('ping-bad', [...flags], ['true']);
    expect(result.code).toBe(64);
    expect(result.stderr).toMatch(message);
  });

  test('DLOCK_PING_URL that is not http(s): 64 naming it', async () => {
    const result = await run('ping-bad', [], ['true'], { DLOCK_PING_URL: 'redis://x' });
    expect(result.code).toBe(64);
    expect(result.stderr).toMatch(/DLOCK_PING_URL: expected an http/);
  });
});

async function waitUntil(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
