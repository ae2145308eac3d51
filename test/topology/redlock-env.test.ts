// Redlock over 3 password-protected instances: a comma-separated DLOCK_REDIS_URL is the same
// quorum as repeated --redis, and failures name each instance without its password.

import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { childEnv, HOLD, killLeftovers, spawnDlock, tempDir } from '../fixtures/observe.js';
import { cleanEnv, dlock } from '../helpers/cli.js';
import { startServers, type RedisServer } from '../../support/redis-server.mjs';
import { heal, waitForMoreEvents } from '../helpers/redlock.js';

const PASSWORD = 'S3cret-pass';

let servers: RedisServer[];
let clients: Redis[];
let urls: string[];
let flags: string[];
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  servers = await startServers(3, { args: ['--requirepass', PASSWORD] });
  clients = servers.map((server) =>
    new Redis({ host: '127.0.0.1', port: server.port, password: PASSWORD, maxRetriesPerRequest: 1 }).on(
      'error',
      () => {},
    ),
  );
  urls = servers.map((server) => `redis://:${PASSWORD}@127.0.0.1:${server.port}`);
  flags = urls.flatMap((url) => ['--redis', url]);
  env = cleanEnv({ DLOCK_REDIS_URL: urls.join(',') });
});
afterEach(async () => {
  killLeftovers();
  await heal(servers);
});
afterAll(async () => {
  for (const client of clients) client.disconnect();
  await Promise.all(servers.map((server) => server.close()));
});

/** How an instance's URL may appear in any output. */
const shown = (server: RedisServer) => `redis://:***@127.0.0.1:${server.port}`;

test('a comma-separated DLOCK_REDIS_URL is the same Redlock as repeated --redis', async () => {
  const key = 'from-env';
  const dir = tempDir();
  // 4s leases: the holder must keep its lock through four dlock starts, then with 1 of 3 down
  // (both others answering each renewal within a tenth of the TTL) on a loaded machine.
  const holder = spawnDlock(['run', '-t', '4s', '--log-format', 'json', key, '--', HOLD, dir], { env });
  await holder.waitFor('"event":"acquired"');
  const { DLOCK_TOKEN: owner } = await childEnv(dir);
  expect(await Promise.all(clients.map((client) => client.hget(`dlock:{${key}}`, 'owner')))).toEqual([
    owner,
    owner,
    owner,
  ]);

  // status sees one lock on 3 instances, whether the URLs come from the environment or flags.
  for (const options of [{ args: ['status', '--json', key], env }, { args: ['status', '--json', ...flags, key] }]) {
    const result = await dlock(options.args, { env: options.env });
    expect(result.code, result.stderr).toBe(0);
    const view = JSON.parse(result.stdout);
    expect(view).toMatchObject({ held: true, quorum: 2, holder: { pid: holder.process.pid, fence: '1' } });
    expect(view.instances.map((i: { redis: string }) => i.redis)).toEqual(servers.map(shown));
  }
  expect((await dlock(['run', '-n', key, '--', 'true'], { env })).code).toBe(75);
  expect((await dlock(['run', '-n', ...flags, key, '--', 'true'])).code).toBe(75);

  // One of three down: the holder keeps its lock, and the next holder gets the next token.
  await servers[1].stop();
  await waitForMoreEvents(holder, 'renewed', 2);
  writeFileSync(join(dir, 'stop'), '');
  expect((await holder.result).code).toBe(0);
  expect(
    await dlock(['run', '-t', '4s', key, '--', 'sh', '-c', 'printf %s "$DLOCK_FENCING_TOKEN"'], { env }),
  ).toMatchObject({ code: 0, stdout: '2' });
});

test('with 2 of 3 failing: 69 naming each and why, passwords masked, the same from the env as from flags', async () => {
  await servers[0].stop();
  const wrong = [urls[0], urls[1].replace(PASSWORD, 'wrong-pass'), urls[2]];
  const dir = tempDir();
  const ran = join(dir, 'ran');
  // A 4s TTL: the one good instance gets 400ms to answer (a tenth of the TTL), enough on a loaded machine.
  const results = [
    await dlock(['run', '-t', '4s', 'k', '--', 'touch', ran], { env: cleanEnv({ DLOCK_REDIS_URL: wrong.join(',') }) }),
    await dlock(['run', ...wrong.flatMap((url) => ['--redis', url]), '-t', '4s', 'k', '--', 'touch', ran]),
  ];
  for (const result of results) {
    expect(result.code, result.stderr).toBe(69);
    expect(result.stderr).toBe(
      `dlock: no quorum: 2 of 3 Redis instances needed, 2 failed (${shown(servers[0])}: connection refused; ${shown(servers[1])}: authentication failed)\n`,
    );
    expect(result.stdout).toBe('');
  }
  expect(existsSync(ran)).toBe(false);

  await servers[2].stop();
  for (const args of [
    ['status', 'k'],
    ['release', '--force', 'k'],
  ]) {
    const result = await dlock(args, { env });
    expect(result.code, result.stderr).toBe(69);
    expect(result.stderr).toMatch(/^dlock: no quorum: 2 of 3 Redis instances needed, 2 failed \(/);
    for (const server of [servers[0], servers[2]])
      expect(result.stderr).toContain(`${shown(server)}: connection refused`);
    expect(result.stderr + result.stdout).not.toContain(PASSWORD);
  }
});
