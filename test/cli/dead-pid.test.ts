// status and the busy line say when the holder on this host is gone: a dlock killed with SIGKILL
// leaves its lock until the TTL runs out (docs/guides/cron.md). A holder whose host is
// another name claims nothing about its pid.

import { hostname } from 'node:os';
import { expect, test } from 'vitest';
import { dlock } from '../helpers/cli.js';
import { RedisServer } from '../../support/redis-server.mjs';
import { hold, waitForDeath } from '../fixtures/observe.js';
import { useRedisServer } from '../helpers/server.js';

let redis: RedisServer;
useRedisServer((server) => (redis = server));

test('a holder on this host killed with SIGKILL: status and the busy line say its pid is not running', async () => {
  const held = hold('dead-holder', { redis: redis.url, flags: ['-t', '60s'] });
  const child = await held.child();
  const pid = held.process.pid!;

  // Alive first: nothing is claimed, and JSON says it runs.
  const before = await dlock(['status', '--redis', redis.url, 'dead-holder']);
  expect(before.stdout).toMatch(new RegExp(`\\n  pid +${pid}\\n`));
  expect(
    JSON.parse((await dlock(['status', '--json', '--redis', redis.url, 'dead-holder'])).stdout).holder,
  ).toMatchObject({ pid, pid_alive: true });

  held.process.kill('SIGKILL');
  await waitForDeath(pid);
  await waitForDeath(child.pid);

  const text = await dlock(['status', '--redis', redis.url, 'dead-holder']);
  expect(text.code).toBe(0);
  expect(text.stdout).toMatch(
    new RegExp(`\\n  pid +${pid} \\(pid ${pid} is not running on this host: the lock expires in [\\d.]+s\\)\\n`),
  );
  const json = JSON.parse((await dlock(['status', '--json', '--redis', redis.url, 'dead-holder'])).stdout);
  expect(json.holder).toMatchObject({ host: hostname(), pid, pid_alive: false });
  expect(json.instances[0].holder).toMatchObject({ pid, pid_alive: false });

  const list = await dlock(['status', '--redis', redis.url]);
  expect(list.stdout).toMatch(
    new RegExp(`dead-holder +${hostname().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} +${pid} \\(not running\\) `),
  );
  expect(JSON.parse((await dlock(['status', '--json', '--redis', redis.url])).stdout)).toEqual([
    expect.objectContaining({ key: 'dead-holder', pid, pid_alive: false }),
  ]);

  const busy = await dlock(['run', '-n', '--redis', redis.url, 'dead-holder', '--', 'true']);
  expect(busy.code).toBe(75);
  expect(busy.stderr).toMatch(
    new RegExp(
      `^dlock: dead-holder is busy \\(held by .* pid ${pid}, for [^;]*, fence \\d+; pid ${pid} is not running on this host: the lock expires in [\\d.]+s\\); not acquired\\n$`,
    ),
  );
  const busyJson = await dlock([
    'run',
    '-n',
    '--log-format',
    'json',
    '--redis',
    redis.url,
    'dead-holder',
    '--',
    'true',
  ]);
  expect(JSON.parse(busyJson.stderr).holder).toMatchObject({ pid, pid_alive: false });
});

test('a holder with another host name (forged) claims nothing about its pid', async () => {
  const admin = redis.client();
  // A pid that surely does not run here: one of a process that has exited.
  const gone = hold('gone-probe', { redis: redis.url });
  const goneChild = await gone.child();
  gone.stop();
  await gone.result;
  await waitForDeath(goneChild.pid);
  await admin.hset(
    'dlock:{elsewhere}',
    'owner',
    'x',
    'fence',
    '1',
    'host',
    'some-other-host',
    'pid',
    String(goneChild.pid),
    'since_ms',
    String(Date.now()),
    'ttl_ms',
    '60000',
  );
  await admin.pexpire('dlock:{elsewhere}', 60_000);

  const text = await dlock(['status', '--redis', redis.url, 'elsewhere']);
  expect(text.stdout).toMatch(new RegExp(`\\n  pid +${goneChild.pid}\\n`));
  expect(text.stdout).not.toContain('not running');
  const json = JSON.parse((await dlock(['status', '--json', '--redis', redis.url, 'elsewhere'])).stdout);
  expect(json.holder.pid).toBe(goneChild.pid);
  expect(json.holder).not.toHaveProperty('pid_alive');
  const busy = await dlock(['run', '-n', '--redis', redis.url, 'elsewhere', '--', 'true']);
  expect(busy.stderr).not.toContain('not running');

  // The same hash with this host's name: now the pid is checked.
  await admin.hset('dlock:{elsewhere}', 'host', hostname());
  expect((await dlock(['status', '--redis', redis.url, 'elsewhere'])).stdout).toContain(
    `pid ${goneChild.pid} is not running on this host`,
  );
});

/** `text` with every character a regular expression gives meaning to escaped. */
const literally = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

test('a --no-keeper hold (held across CI steps): status, the table, --json and the busy line call it that, not a dead pid', async () => {
  const taken = await dlock(['acquire', '--no-keeper', '--ttl', '60s', '--redis', redis.url, 'ci-deploy']);
  expect(taken.code).toBe(0);
  // The acquire has exited, by design: nothing of this host holds the lock, and nothing says it died.
  const text = await dlock(['status', '--redis', redis.url, 'ci-deploy']);
  expect(text.code).toBe(0);
  expect(text.stdout).not.toContain('not running');
  expect(text.stdout).toMatch(
    /\n {2}pid +none \(held across steps \(--no-keeper\): no process renews it; it expires in [\d.]+s unless dlock renew extends it\)\n/,
  );
  const json = JSON.parse((await dlock(['status', '--json', '--redis', redis.url, 'ci-deploy'])).stdout);
  expect(json.holder).toMatchObject({ host: hostname(), pid: null, no_keeper: true, cmd: 'dlock acquire --no-keeper' });
  expect(json.holder).not.toHaveProperty('pid_alive');
  expect(json.instances[0].holder).toMatchObject({ pid: null, no_keeper: true });

  // Other tests' locks share this server: only this one's row is looked at.
  const list = await dlock(['status', '--redis', redis.url]);
  const row = list.stdout.split('\n').find((line) => line.startsWith('ci-deploy '));
  expect(row).toMatch(new RegExp(`^ci-deploy +${literally(hostname())} +none \\(--no-keeper\\) `));
  expect(row).not.toContain('not running');
  const listed = JSON.parse((await dlock(['status', '--json', '--redis', redis.url])).stdout);
  expect(listed.find((entry: { key: string }) => entry.key === 'ci-deploy')).toMatchObject({
    pid: null,
    no_keeper: true,
  });

  const busy = await dlock(['run', '-n', '--redis', redis.url, 'ci-deploy', '--', 'true']);
  expect(busy.code).toBe(75);
  expect(busy.stderr).toMatch(
    new RegExp(
      `^dlock: ci-deploy is busy \\(held by ${literally(hostname())}, for [^;]*, fence \\d+; ` +
        `held across steps \\(--no-keeper\\): no process renews it; it expires in [\\d.]+s unless dlock renew extends it\\); not acquired\\n$`,
    ),
  );
  expect(busy.stderr).not.toContain('not running');
  const busyJson = await dlock(['run', '-n', '--log-format', 'json', '--redis', redis.url, 'ci-deploy', '--', 'true']);
  const event = JSON.parse(busyJson.stderr);
  expect(event.holder).toMatchObject({ pid: null, no_keeper: true });
  expect(event.holder).not.toHaveProperty('pid_alive');
});

test('a --no-keeper hold an older dlock wrote (the exited acquire pid stored) is not called dead either', async () => {
  const admin = redis.client();
  const gone = hold('old-probe', { redis: redis.url });
  const goneChild = await gone.child();
  gone.stop();
  await gone.result;
  await waitForDeath(goneChild.pid);
  await admin.hset('dlock:{old-ci}', {
    owner: 'x',
    fence: '3',
    host: hostname(),
    pid: String(goneChild.pid),
    cmd: 'dlock acquire --no-keeper',
    since_ms: String(Date.now()),
    ttl_ms: '60000',
  });
  await admin.pexpire('dlock:{old-ci}', 60_000);

  const text = await dlock(['status', '--redis', redis.url, 'old-ci']);
  expect(text.stdout).not.toContain('not running');
  expect(text.stdout).toMatch(new RegExp(`\\n  pid +${goneChild.pid} \\(held across steps \\(--no-keeper\\): `));
  const json = JSON.parse((await dlock(['status', '--json', '--redis', redis.url, 'old-ci'])).stdout);
  expect(json.holder).toMatchObject({ pid: goneChild.pid, no_keeper: true });
  expect(json.holder).not.toHaveProperty('pid_alive');
  const busy = await dlock(['run', '-n', '--redis', redis.url, 'old-ci', '--', 'true']);
  expect(busy.stderr).toContain(`pid ${goneChild.pid}, for`);
  expect(busy.stderr).toContain('; held across steps (--no-keeper): no process renews it; it expires in ');
  expect(busy.stderr).not.toContain('not running');
});
