// dlock serve (issue 35, the board): spawned as a user runs it against a real redis-server. Its
// API says what `status --json` says; every answer carries the security headers; the page holds
// nothing from the store (the script writes it as text; test/slow/board.browser.test.ts shows
// that in a browser); only GET and HEAD; a bad --listen is 64, a port taken 69; through an outage
// the page stays, the API answers 503 with the last good data marked stale and since when, and it
// recovers when the store is back; SIGTERM and SIGINT exit 0; keys named on its command line show
// when free, with their done mark; an etcd:// URL works through the same backend.

import { request } from 'node:http';
import { createServer } from 'node:net';
import type { Redis } from 'ioredis';
import { expect, test } from 'vitest';
import { dlock } from '../helpers/cli.js';
import { expectOneError } from '../helpers/hostile.js';
import { useEtcdServer } from '../helpers/etcd.js';
import { useRedisServer } from '../helpers/server.js';
import { hold, spawnDlock } from '../fixtures/observe.js';
import { freePort, type RedisServer } from '../../support/redis-server.mjs';
import type { EtcdServer } from '../../support/etcd-server.mjs';
import { waitUntil } from '../../support/wait-until.mjs';

let redis: RedisServer;
let admin: Redis;
useRedisServer((server) => {
  redis = server;
  admin = server.client();
});
let etcd: EtcdServer;
useEtcdServer((server) => (etcd = server));

const XSS = `<script>document.title='owned'</script><img src=x onerror=alert(1)>`;
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** A holder no dlock wrote: the lock hash of `key` set by hand, as anyone who can write to Redis could. */
async function forge(key: string, fields: Record<string, string>): Promise<void> {
  const since = String(Number(await admin.call('TIME').then((t) => (t as string[])[0])) * 1000);
  await admin.hset(`dlock:{${key}}`, {
    owner: 'forged',
    fence: '7',
    pid: '1',
    since_ms: since,
    ttl_ms: '60000',
    ...fields,
  });
  await admin.pexpire(`dlock:{${key}}`, 60_000);
}

/** What /api/board answers (the fields these tests read). */
interface BoardJson {
  locks: { key: string; holder: { cmd: string; host: string } }[];
  stale: boolean;
  error?: string;
  unreachable_since?: string;
  unreachable_since_ms: number;
}
const boardJson = (response: Response) => response.json() as Promise<BoardJson>;

/**
 * `dlock serve` on a free port (on the test's Redis unless --redis is given); resolves once it says where. A
 * port another test's server took between freePort() and the listen (69, in use) is tried again with another.
 */
async function serve(...args: string[]) {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const serving = spawnDlock([
      'serve',
      ...(args.includes('--redis') ? [] : ['--redis', redis.url]),
      '--connect-timeout',
      '500ms',
      '--listen',
      `${port}`,
      ...args,
    ]);
    const url = `http://127.0.0.1:${port}`;
    const up = serving.waitFor(`dlock: serving the board on ${url}/\n`).then(
      () => undefined,
      () => serving.result,
    );
    const ended = await Promise.race([up, serving.result]);
    if (ended === undefined) return { ...serving, url };
    if (attempt < 3 && ended.code === 69 && /EADDRINUSE/.test(ended.stderr)) continue;
    throw new Error(`dlock serve exited ${ended.code}: ${ended.stderr}`);
  }
}

/** `status --json` as the API says it: ttl_left_ms runs on between two reads, so only its type is compared. */
function steady(json: unknown): unknown {
  return JSON.parse(JSON.stringify(json), (name, value) => (name === 'ttl_left_ms' ? typeof value : value));
}

test('the API says what status --json says; every answer has the security headers and its content type', async () => {
  const held = hold('s-held', { redis: redis.url });
  await held.waitFor('"event":"acquired"');
  await forge('s-forged', { host: 'h'.repeat(100_000), cmd: XSS });
  const board = await serve();

  const status = await dlock(['status', '--redis', redis.url, '--json']);
  const listing = await fetch(`${board.url}/api/locks`);
  expect(listing.status).toBe(200);
  expect(steady(await listing.json())).toEqual(steady(JSON.parse(status.stdout)));
  const one = await dlock(['status', '--redis', redis.url, '--json', 's-held']);
  const key = await fetch(`${board.url}/api/locks/s-held`);
  expect(steady(await key.json())).toEqual(steady(JSON.parse(one.stdout)));

  const types: Record<string, string> = {
    '/': 'text/html; charset=utf-8',
    '/lock/s-held': 'text/html; charset=utf-8',
    '/board.js': 'text/javascript; charset=utf-8',
    '/board.css': 'text/css; charset=utf-8',
    '/api/board': 'application/json; charset=utf-8',
    '/api/locks': 'application/json; charset=utf-8',
    '/api/locks/s-held': 'application/json; charset=utf-8',
    '/api/board/s-held': 'application/json; charset=utf-8',
    '/metrics': 'text/plain; version=0.0.4; charset=utf-8',
    '/nowhere': 'text/plain; charset=utf-8',
  };
  for (const [path, type] of Object.entries(types)) {
    const response = await fetch(`${board.url}${path}`);
    expect([path, response.headers.get('content-type')]).toEqual([path, type]);
    expect(response.headers.get('content-security-policy')).toBe(CSP);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('referrer-policy')).toBe('no-referrer');
    expect(response.status).toBe(path === '/nowhere' ? 404 : 200);
  }
  // /metrics is dlock metrics' own text.
  const metrics = await (await fetch(`${board.url}/metrics`)).text();
  expect(metrics).toContain('dlock_lock_held{key="s-held",prefix="dlock:"} 1');
  board.process.kill('SIGTERM');
  expect((await board.result).code).toBe(0);
  held.stop();
});

test('a forged holder: the page holds nothing of it; the API has it cut, as data; HTML is never built from it', async () => {
  await forge('s-evil', { host: 'h'.repeat(100_000), cmd: XSS, reason: 'r'.repeat(5000) });
  const board = await serve();
  const html = await (await fetch(`${board.url}/`)).text();
  const page = await (await fetch(`${board.url}/lock/${encodeURIComponent(XSS)}`)).text();
  // The shell is the same for every address: no name from the path, no field from the store.
  expect(page).toBe(html);
  expect(html).not.toMatch(/s-evil|onerror|document\.title|hhhh/);
  expect(html.match(/<script\b[^>]*>/g)).toEqual(['<script src="/board.js" defer>']);
  const answer = await boardJson(await fetch(`${board.url}/api/board`));
  const evil = answer.locks.find((lock) => lock.key === 's-evil')!;
  expect(evil.holder.cmd).toBe(XSS);
  expect(evil.holder.host).toBe(`${'h'.repeat(256)}…(${100_000 - 256} more)`);
  // The script writes text only: no innerHTML, no insertAdjacentHTML, no document.write, no eval.
  const script = await (await fetch(`${board.url}/board.js`)).text();
  expect(script).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function/);
  expect(script).toContain('textContent');
  board.process.kill('SIGINT');
  expect((await board.result).code).toBe(0);
});

test('only GET and HEAD: anything else is 405 and changes nothing', async () => {
  const held = hold('s-post', { redis: redis.url });
  await held.waitFor('"event":"acquired"');
  const board = await serve();
  for (const method of ['POST', 'PUT', 'DELETE', 'PATCH'])
    for (const path of ['/', '/api/locks/s-post', '/api/board']) {
      const response = await fetch(`${board.url}${path}`, { method, body: method === 'DELETE' ? undefined : 'x' });
      expect([method, path, response.status, response.headers.get('allow')]).toEqual([method, path, 405, 'GET, HEAD']);
    }
  const head = await fetch(`${board.url}/api/locks`, { method: 'HEAD' });
  expect(head.status).toBe(200);
  expect(await head.text()).toBe('');
  expect((await dlock(['status', '--redis', redis.url, 's-post'])).code).toBe(0);
  // A name that is no key is refused as status refuses it.
  const bad = await fetch(`${board.url}/api/locks/a%20b`);
  expect(bad.status).toBe(400);
  expect(((await bad.json()) as { error: string }).error).toMatch(/^key: must be printable/);
  board.process.kill('SIGTERM');
  expect((await board.result).code).toBe(0);
  held.stop();
});

test('a bad --listen is 64, a port taken 69, each one line', async () => {
  for (const listen of ['abc', '70000', '[nothost]:80', '1.2.3.4:'])
    expectOneError(await dlock(['serve', '--redis', redis.url, '--listen', listen]), 64, /^dlock: --listen: /);
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const { port } = taken.address() as { port: number };
  try {
    const result = await dlock(['serve', '--redis', redis.url, '--listen', String(port)]);
    expectOneError(result, 69, `dlock: --listen 127.0.0.1:${port}: cannot listen there (EADDRINUSE)`);
  } finally {
    taken.close();
  }
});

test('through an outage: the page stays, the API says since when with the last data stale, then recovers', async () => {
  const held = hold('s-outage', { redis: redis.url, flags: ['-t', '1h'] });
  await held.waitFor('"event":"acquired"');
  const board = await serve();
  const first = await boardJson(await fetch(`${board.url}/api/board`));
  expect(first.locks.map((lock) => lock.key)).toContain('s-outage');
  const stopped = Date.now();
  await redis.stop();
  const down = await waitUntil('the board to say the store is unreachable', async () => {
    const response = await fetch(`${board.url}/api/board`);
    return response.status === 503 ? boardJson(response) : undefined;
  });
  expect(down).toMatchObject({ stale: true, error: expect.stringMatching(/127\.0\.0\.1/) });
  expect(down.unreachable_since_ms).toBeGreaterThanOrEqual(stopped - 1);
  expect(down.unreachable_since).toBe(new Date(down.unreachable_since_ms).toISOString());
  // The last good data is still there, marked stale.
  expect(down.locks.map((lock) => lock.key)).toContain('s-outage');
  const listing = await fetch(`${board.url}/api/locks`);
  expect(listing.status).toBe(503);
  expect(await listing.json()).toMatchObject({ error: expect.any(String), unreachable_since: down.unreachable_since });
  const page = await fetch(`${board.url}/`);
  expect(page.status).toBe(200);
  await board.waitFor(/dlock: store unreachable: .*\n/);
  expect(board.stderr()).not.toMatch(/\n\s+at |internal error/);

  await redis.launch();
  const up = await waitUntil(
    'the board to read the store again',
    async () => {
      const response = await fetch(`${board.url}/api/board`);
      return response.status === 200 ? boardJson(response) : undefined;
    },
    { timeoutMs: 20_000 },
  );
  expect(up).toMatchObject({ stale: false });
  expect(up.unreachable_since).toBeUndefined();
  await board.waitFor('dlock: store reachable again');
  board.process.kill('SIGTERM');
  expect((await board.result).code).toBe(0);
  held.process.kill('SIGTERM');
});

test('a key named on the command line shows when free: its --once-per done mark and its last events', async () => {
  expect((await dlock(['run', '--redis', redis.url, '--once-per', '1h', 's-nightly', '--', 'true'])).code).toBe(0);
  const board = await serve('s-nightly', 's-never');
  const answer = (await (await fetch(`${board.url}/api/board`)).json()) as {
    locks: { key: string; held: boolean; done?: Record<string, unknown>; history: { event: string }[] }[];
  };
  const [nightly, never] = answer.locks;
  expect(nightly).toMatchObject({ key: 's-nightly', held: false, done: { cmd: 'true', fence: '1' } });
  const done = nightly.done as { started_ms: number; finished_ms: number; until_ms: number };
  // The mark's end is read as TIME + PTTL, two commands: right to the millisecond or two between them.
  expect(Math.abs(done.until_ms - done.started_ms - 3_600_000)).toBeLessThanOrEqual(5);
  expect(done.finished_ms).toBeGreaterThanOrEqual(done.started_ms);
  expect(nightly.history.map((event) => event.event)).toEqual(['released', 'acquired']);
  expect(never).toMatchObject({ key: 's-never', held: false, history: [] });
  expect(never.done).toBeUndefined();
  board.process.kill('SIGTERM');
  expect((await board.result).code).toBe(0);
});

test('on etcd, through the same backend: the held lock and its line; no history or done mark is kept there', async () => {
  const held = hold('e-held', { redis: etcd.url });
  await held.waitFor('"event":"acquired"');
  const waiter = spawnDlock(['run', '--redis', etcd.url, '--log-format', 'json', 'e-held', '--', 'true']);
  await waiter.waitFor('"event":"waiting"');
  const board = await serve('--redis', etcd.url);
  const status = await dlock(['status', '--redis', etcd.url, '--json']);
  expect(steady(await (await fetch(`${board.url}/api/locks`)).json())).toEqual(steady(JSON.parse(status.stdout)));
  const answer = (await (await fetch(`${board.url}/api/board`)).json()) as {
    locks: { key: string; held: boolean; waiting: number; history: unknown; done?: unknown }[];
  };
  expect(answer.locks).toEqual([expect.objectContaining({ key: 'e-held', held: true, waiting: 1, history: null })]);
  expect(answer.locks[0].done).toBeUndefined();
  board.process.kill('SIGTERM');
  expect((await board.result).code).toBe(0);
  held.stop();
  expect((await waiter.result).code).toBe(0);
});

test('on loopback it answers only to loopback names: a page whose DNS name points at 127.0.0.1 gets 421', async () => {
  const board = await serve();
  const { port } = new URL(board.url);
  /** GET / with `host` as the Host header, as a browser sends the name it was given. */
  const get = (host: string) =>
    new Promise<{ status: number; csp: unknown }>((resolve, reject) =>
      request({ host: '127.0.0.1', port, path: '/api/locks', headers: { host } }, (response) => {
        response.resume();
        resolve({ status: response.statusCode!, csp: response.headers['content-security-policy'] });
      })
        .on('error', reject)
        .end(),
    );
  for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST:${port}`, `[::1]:${port}`])
    expect([host, (await get(host)).status]).toEqual([host, 200]);
  for (const host of [`evil.example:${port}`, 'evil.example', `127.0.0.1:${Number(port) + 1}`])
    expect([host, await get(host)]).toEqual([host, { status: 421, csp: CSP }]);
  board.process.kill('SIGTERM');
  expect((await board.result).code).toBe(0);
});
