// Between the endpoints of one etcd cluster when one of them misbehaves without being down: an
// endpoint that answers `{}` to everything (not etcd), a revoke whose reply is lost on the way back,
// and a proxy in front of the watch that passes nothing through (a buffering HTTP proxy). Each was
// a review's finding: a lock read as free, a release reported as "no longer ours", a turn taken a
// minute late.

import { createServer, request as httpRequest, type Server } from 'node:http';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { EtcdServer } from '../../support/etcd-server.mjs';
import { TcpProxy } from '../../support/tcp-proxy.mjs';
import { cleanEnv, dlock, start } from '../helpers/cli.js';
import { useEtcdServer } from '../helpers/etcd.js';
import { onlyEvent } from '../fixtures/observe.js';

let etcd: EtcdServer;
useEtcdServer((started) => (etcd = started));

/** An HTTP server on a free port: `{}` to every POST, or every request passed to etcd but the watch's, held for ever. */
let notEtcd: Server;
let silentWatch: Server;
const portOf = (server: Server) => (server.address() as { port: number }).port;

beforeAll(async () => {
  notEtcd = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  silentWatch = createServer((request, response) => {
    if (request.url === '/v3/watch') return void request.resume();
    const upstream = httpRequest(
      { host: '127.0.0.1', port: etcd.port, path: request.url, method: request.method, headers: request.headers },
      (reply) => {
        response.writeHead(reply.statusCode ?? 502, reply.headers);
        reply.pipe(response);
      },
    );
    upstream.on('error', () => response.destroy());
    request.pipe(upstream);
  });
  await Promise.all(
    [notEtcd, silentWatch].map((server) => new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok))),
  );
});

afterAll(() => {
  notEtcd?.closeAllConnections();
  silentWatch?.closeAllConnections();
  notEtcd?.close();
  silentWatch?.close();
});

test('an endpoint answering {} listed first is no etcd: run fails over, status reads the real holder', async () => {
  const url = `etcd://127.0.0.1:${portOf(notEtcd)},${etcd.endpoint}`;
  const holder = start(['run', '--redis', etcd.url, '--log-format', 'json', 'ne', '--', 'sleep', '30']);
  await holder.waitFor('"acquired"');
  const status = await dlock(['status', '--json', '--redis', url, 'ne']);
  expect(status.code, status.stderr).toBe(0);
  expect(JSON.parse(status.stdout)).toMatchObject({ key: 'ne', held: true, holder: { cmd: 'sleep 30' } });
  const busy = await dlock(['run', '-n', '--redis', url, 'ne', '--', 'echo', 'RAN']);
  expect(busy.code, busy.stderr).toBe(75);
  holder.process.kill('SIGTERM');
  await holder.result;
  const run = await dlock(['run', '--redis', url, 'ne', '--', 'echo', 'RAN']);
  expect(run).toMatchObject({ code: 0, stdout: 'RAN\n' });
});

test('a release whose revoke reply is lost: released (or expired), never "no longer ours" (76)', async () => {
  const proxy = await TcpProxy.start(etcd.port);
  try {
    const url = `etcd://127.0.0.1:${proxy.port},${etcd.endpoint}`;
    const acquired = await dlock(['acquire', '--no-keeper', '--redis', url, 'lostrevoke']);
    expect(acquired.code, acquired.stderr).toBe(0);
    const token = /DLOCK_TOKEN='?([0-9a-f]{32})/.exec(acquired.stdout)?.[1];
    expect(token).toBeDefined();
    const dropped = proxy.dropReplyTo('/v3/lease/revoke');
    const released = await dlock(['release', '--redis', url, '--token', token!, 'lostrevoke']);
    await dropped;
    expect(released.stderr).not.toMatch(/no longer/);
    expect(released.code, released.stderr).toBe(0);
    const status = await dlock(['status', '--redis', etcd.url, 'lostrevoke']);
    expect(status.code).toBe(1);
  } finally {
    await proxy.close();
  }
});

test('a watch that passes nothing (a buffering proxy): the waiter takes its turn within ttl/3 of the release', async () => {
  const holder = start(['run', '--redis', etcd.url, '--log-format', 'json', 'sw', '--', 'sleep', '1']);
  await holder.waitFor('"acquired"');
  const url = `etcd://127.0.0.1:${portOf(silentWatch)}`;
  const waiter = await dlock(
    ['run', '--redis', url, '--ttl', '3s', '--wait', '15s', '--log-format', 'json', 'sw', '--', 'true'],
    {
      env: cleanEnv(),
    },
  );
  const held = await holder.result;
  expect(waiter.code, waiter.stderr).toBe(0);
  const releasedAt = onlyEvent(held.stderr, 'released').ts_ms;
  const acquiredAt = onlyEvent(waiter.stderr, 'acquired').ts_ms;
  // A keepalive every ttl/3 (1 s) reads the line again; a loaded machine is given as much again.
  expect(acquiredAt - releasedAt).toBeLessThan(2_000);
});
