// A nested `dlock run` (re-entrant: its key's DLOCK_TOKEN still holds the lock) keeps the lease
// alive and watches it, as a normal hold does: under a `--no-keeper` lock (docs/guides/ci.md's
// dotenv flow) nobody else renews it. It renews under the token it was given (owner-checked, the
// hold's own lease length) every ttl/3, and when the lease is taken away it stops its command
// (--on-lost) and exits 76. It never releases the lock. Real redis-server; time from ts_ms.

import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import type { RedisServer } from '../../support/redis-server.mjs';
import { events, onlyEvent, spawnDlock, tempDir } from '../fixtures/observe.js';
import { cleanEnv, dlock } from '../helpers/cli.js';
import { useRedisServer } from '../helpers/server.js';

let redis: RedisServer;
useRedisServer((server) => (redis = server));

/** `dlock acquire --no-keeper --json`: the section's variables, as the dotenv flow exports them. */
async function noKeeperSection(key: string, ttl: string): Promise<NodeJS.ProcessEnv> {
  const { code, stdout, stderr } = await dlock(['acquire', '--redis', redis.url, '--no-keeper', '--ttl', ttl, key], {
    env: cleanEnv(),
  });
  expect(code, stderr).toBe(0);
  const vars = Object.fromEntries(
    stdout
      .trim()
      .split('\n')
      .map((line) => /^export (\w+)='(.*)'$/.exec(line)!.slice(1, 3)),
  );
  expect(Object.keys(vars)).toEqual(['DLOCK_KEY', 'DLOCK_TOKEN', 'DLOCK_FENCING_TOKEN', 'DLOCK_TTL_MS']);
  return cleanEnv(vars);
}

/** `dlock run -v --log-format json <key> -- sh -c <script>` in the section's environment: a nested run. */
const nestedRun = (key: string, section: NodeJS.ProcessEnv, script: string) =>
  spawnDlock(['run', '--redis', redis.url, '--log-format', 'json', '-v', key, '--', 'sh', '-c', script], {
    env: section,
  });

test('a nested run under a --no-keeper lock renews it: a contender with -w gets in only after it, 0', async () => {
  const section = await noKeeperSection('nest-gl', '3s');
  const dir = tempDir();
  const nested = nestedRun('nest-gl', section, `sleep 5; touch ${dir}/done`);
  await nested.waitFor('"event":"acquired"');
  const contender = await dlock(
    ['run', '--redis', redis.url, '--log-format', 'json', '-w', '20s', 'nest-gl', '--', 'sh', '-c', `ls ${dir}`],
    { env: cleanEnv() },
  );
  const result = await nested.result;
  expect(result.code, result.stderr).toBe(0);
  expect(contender.code, contender.stderr).toBe(0);
  // The contender's command ran after the nested one ended: it saw its file.
  expect(contender.stdout).toBe('done\n');
  const acquired = onlyEvent(result.stderr, 'acquired');
  expect(acquired).toMatchObject({ key: 'nest-gl', reentrant: true, fence: section.DLOCK_FENCING_TOKEN });
  // The lease outlived its 3 s: renewed under the section's token every ttl/3.
  const renewals = events(result.stderr, 'renewed');
  expect(renewals.length).toBeGreaterThanOrEqual(3);
  expect(events(result.stderr, 'released')).toEqual([]);
  expect(onlyEvent(contender.stderr, 'acquired').ts_ms - acquired.ts_ms).toBeGreaterThanOrEqual(5000);
});

test.each([
  ['release --force --now', ['release', '--force', '--now']],
  ["the section's own release", ['release']],
])('a nested run whose lease is taken away (%s) stops its command and exits 76', async (_, release) => {
  const section = await noKeeperSection('nest-taken', '3s');
  const dir = tempDir();
  const nested = nestedRun('nest-taken', section, `sleep 20; touch ${dir}/done`);
  await nested.waitFor('"event":"acquired"');
  const released = await dlock([...release, '--redis', redis.url, 'nest-taken'], { env: section });
  expect(released.code, released.stderr).toBe(0);
  const result = await nested.result;
  expect(result.code, result.stderr).toBe(76);
  const lost = onlyEvent(result.stderr, 'lost');
  expect(lost).toMatchObject({ key: 'nest-taken', reason: 'refused' });
  // Found at the next renewal (every ttl/3 = 1 s), not when the command ends.
  expect(lost.ts_ms - onlyEvent(result.stderr, 'acquired').ts_ms).toBeLessThan(3000);
  expect(onlyEvent(result.stderr, 'error').message).toMatch(
    /^lost the lock nest-taken while the command ran: renewal refused/,
  );
  expect(events(result.stderr, 'released')).toEqual([]);
  expect(existsSync(join(dir, 'done'))).toBe(false);
});

test('the CI job after a --no-keeper lease ran out: a nested run or acquire exits 76, runs nothing, takes nothing', async () => {
  const section = await noKeeperSection('nest-gone', '500ms');
  await expect.poll(async () => (await dlock(['status', '--redis', redis.url, 'nest-gone'])).code).toBe(1);
  const run = await dlock(['run', '--redis', redis.url, 'nest-gone', '--', 'echo', 'RAN'], { env: section });
  expect(run.code, run.stderr).toBe(76);
  expect(run.stdout).toBe('');
  expect(run.stderr).toMatch(
    /^dlock: nest-gone: the lock an enclosing dlock held .* is no longer held: it expired or was taken/,
  );
  const acquire = await dlock(['acquire', '--redis', redis.url, '--no-keeper', 'nest-gone'], { env: section });
  expect(acquire.code, acquire.stderr).toBe(76);
  expect((await dlock(['status', '--redis', redis.url, 'nest-gone'])).code).toBe(1);
});

test('a section its owner released: the same shell takes the key afresh, and a second release is 0', async () => {
  const runtime = tempDir();
  const section: NodeJS.ProcessEnv = { ...(await noKeeperSection('nest-again', '30s')), XDG_RUNTIME_DIR: runtime };
  expect((await dlock(['release', '--redis', redis.url, 'nest-again'], { env: section })).code).toBe(0);
  const again = await dlock(['release', '--redis', redis.url, 'nest-again'], { env: section });
  expect(again.code, again.stderr).toBe(0);
  const run = await dlock(
    ['run', '--redis', redis.url, 'nest-again', '--', 'sh', '-c', 'echo "$DLOCK_FENCING_TOKEN"'],
    {
      env: section,
    },
  );
  expect(run.code, run.stderr).toBe(0);
  expect(Number(run.stdout)).toBeGreaterThan(Number(section.DLOCK_FENCING_TOKEN));
});

test('a nested run under a --no-keeper lock keeps it for what its command left in the background', async () => {
  const section = await noKeeperSection('nest-bg', '2s');
  const dir = tempDir();
  const nested = nestedRun(
    'nest-bg',
    section,
    `(exec >/dev/null 2>&1; while [ ! -e ${dir}/stop ]; do sleep 0.05; done) & exit 0`,
  );
  try {
    await nested.waitFor('"event":"background"');
    // Past its 2 s lease, renewed for the background step alone: a contender is still turned away.
    const background = onlyEvent(nested.stderr(), 'background');
    await expect
      .poll(() => events(nested.stderr(), 'renewed').filter((e) => e.ts_ms > background.ts_ms + 2000).length, {
        timeout: 10_000,
      })
      .toBeGreaterThan(0);
    const contender = await dlock(['run', '--redis', redis.url, '-n', 'nest-bg', '--', 'echo', 'RAN'], {
      env: cleanEnv(),
    });
    expect(contender.code, contender.stderr).toBe(75);
  } finally {
    // The background step's loop ends with the test, passed or failed.
    writeFileSync(join(dir, 'stop'), '');
  }
  const result = await nested.result;
  expect(result.code, result.stderr).toBe(0);
  expect(events(result.stderr, 'lost')).toEqual([]);
});
