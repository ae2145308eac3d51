// A nested `dlock run` or `dlock acquire` on the key its parent holds runs under the parent's
// hold only when that hold gives what it asks for (exclusive inside exclusive; shared inside
// shared or exclusive; the same --slots n): anything else exits 64 and runs nothing, since it
// would run beside the parent's fellow holders. Real redis-server, dlock spawned as a user runs it.

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import type { RedisServer } from '../../support/redis-server.mjs';
import { hold, spawnDlock, tempDir } from '../fixtures/observe.js';
import { cleanEnv, DLOCK, type Result } from '../helpers/cli.js';
import { useRedisServer } from '../helpers/server.js';

let redis: RedisServer;
useRedisServer((server) => {
  redis = server;
});

/**
 * `dlock run <flags> <key> -- sh -c <script>`; in the script, `run` and `acquire` are
 * `dlock run -n` and `dlock acquire -n` (stdout dropped) on the same Redis.
 */
function outer(flags: string[], key: string, script: string): Promise<Result> {
  const env = cleanEnv({ D: DLOCK, R: redis.url, K: key });
  const helpers = [
    'run() { "$D" run --redis "$R" -n "$@"; }',
    'acquire() { "$D" acquire --redis "$R" -n "$@" >/dev/null; }',
  ].join('\n');
  const command = ['sh', '-c', `${helpers}\n${script}`];
  return spawnDlock(['run', '--redis', redis.url, ...flags, key, '--', ...command], { env }).result;
}

/** The "dlock: " lines of a transcript. */
function dlockLines(stderr: string): string[] {
  return stderr.split('\n').filter((line) => line.startsWith('dlock: '));
}

const NOT_CONVERTED = 'dlock does not convert a lock (flock converts, symfony promotes by waiting)';

test('beside another reader, a nested exclusive run or acquire in a --shared holder exits 64', async () => {
  const reader = hold('nest-shared', { redis: redis.url, flags: ['--shared'] });
  await reader.child();
  const ran = join(tempDir(), 'ran');
  const result = await outer(
    ['--shared'],
    'nest-shared',
    `
    run "$K" -- sh -c 'echo exclusive > ${ran}'; echo "run=$?"
    acquire "$K"; echo "acquire=$?"
    run --shared "$K" -- sh -c 'echo "shared under $DLOCK_FENCING_TOKEN"'; echo "shared=$?"
    "$D" status --redis "$R" "$K" | head -1
  `,
  );
  expect(result.code, result.stderr).toBe(0);
  expect(result.stdout.trim().split('\n')).toEqual([
    'run=64',
    'acquire=64',
    'shared under 2',
    'shared=0',
    'nest-shared: held by 2 shared holders (--shared)',
  ]);
  expect(existsSync(ran)).toBe(false);
  const [run, acquire, ...rest] = dlockLines(result.stderr);
  expect(rest).toEqual([]);
  const asShared = 'dlock: nest-shared is held by this process tree as --shared; ';
  const beside = `inside it would run beside the other readers: ${NOT_CONVERTED}`;
  expect(run).toBe(`${asShared}an exclusive run ${beside}`);
  expect(acquire).toBe(`${asShared}an exclusive acquire ${beside}`);
  reader.stop();
  expect((await reader.result).code).toBe(0);
});

test('the other slot held, only a nested --slots 2 runs under one of --slots 2, others exit 64', async () => {
  const other = hold('nest-slots', { redis: redis.url, flags: ['--slots', '2'] });
  const { env } = await other.child();
  expect(env.DLOCK_SLOT).toBe('0');
  const ran = join(tempDir(), 'ran');
  const result = await outer(
    ['--slots', '2'],
    'nest-slots',
    `
    run "$K" -- sh -c 'echo exclusive >> ${ran}'; echo "exclusive=$?"
    run --shared "$K" -- sh -c 'echo shared >> ${ran}'; echo "shared=$?"
    run --slots 3 "$K" -- sh -c 'echo slots3 >> ${ran}'; echo "slots3=$?"
    acquire "$K"; echo "acquire=$?"
    run --slots 2 "$K" -- sh -c 'echo "slot $DLOCK_SLOT fence $DLOCK_FENCING_TOKEN"'; echo "slots2=$?"
  `,
  );
  expect(result.code, result.stderr).toBe(0);
  const codes = ['exclusive=64', 'shared=64', 'slots3=64', 'acquire=64'];
  expect(result.stdout.trim().split('\n')).toEqual([...codes, 'slot 1 fence 2', 'slots2=0']);
  expect(existsSync(ran)).toBe(false);
  const lines = dlockLines(result.stderr);
  const asSlot = 'dlock: nest-slots is held by this process tree as one of --slots 2; ';
  expect(lines).toEqual([
    `${asSlot}an exclusive run inside it would run beside the holders of the other slots: ${NOT_CONVERTED}`,
    `${asSlot}a --shared run inside it would run beside the holders of the other slots, which are not readers: ${
      NOT_CONVERTED
    }`,
    `${asSlot}a --slots 3 run inside it would count 3 slots where the key has 2: ${NOT_CONVERTED}`,
    `${asSlot}an exclusive acquire inside it would run beside the holders of the other slots: ${NOT_CONVERTED}`,
  ]);
  other.stop();
  expect((await other.result).code).toBe(0);
});

test('in an exclusive holder, a nested --shared run runs under it, a --slots 2 run or acquire exits 64', async () => {
  const result = await outer(
    [],
    'nest-alone',
    `
    run --shared "$K" -- sh -c 'echo "shared under $DLOCK_FENCING_TOKEN"'; echo "shared=$?"
    run "$K" -- sh -c 'echo "exclusive under $DLOCK_FENCING_TOKEN"'; echo "exclusive=$?"
    run --slots 2 "$K" -- sh -c 'echo "slot $DLOCK_SLOT"'; echo "slots=$?"
    acquire --slots 2 "$K"; echo "acquire=$?"
  `,
  );
  expect(result.code, result.stderr).toBe(0);
  const under = ['shared under 1', 'shared=0', 'exclusive under 1', 'exclusive=0'];
  expect(result.stdout.trim().split('\n')).toEqual([...under, 'slots=64', 'acquire=64']);
  const alone = 'dlock: nest-alone is held by this process tree alone (exclusive); ';
  expect(dlockLines(result.stderr)).toEqual([
    `${alone}a --slots 2 run inside it would have no slot of its own: ${NOT_CONVERTED}`,
    `${alone}a --slots 2 acquire inside it would have no slot of its own: ${NOT_CONVERTED}`,
  ]);
});

test("a nested --slots 2 run or acquire with a DLOCK_SLOT not the parent's exits 64, runs nothing", async () => {
  const other = hold('nest-slot-env', { redis: redis.url, flags: ['--slots', '2'] });
  expect((await other.child()).env.DLOCK_SLOT).toBe('0');
  const result = await outer(
    ['--slots', '2'],
    'nest-slot-env',
    `
    echo "outer slot $DLOCK_SLOT"
    DLOCK_SLOT=0 run --slots 2 "$K" -- sh -c 'echo "ran with slot $DLOCK_SLOT"'; echo "forged=$?"
    (unset DLOCK_SLOT; acquire --slots 2 "$K"); echo "unset=$?"
    run --slots 2 "$K" -- sh -c 'echo "ran with slot $DLOCK_SLOT"'; echo "inherited=$?"
  `,
  );
  expect(result.code, result.stderr).toBe(0);
  const under = ['ran with slot 1', 'inherited=0'];
  expect(result.stdout.trim().split('\n')).toEqual(['outer slot 1', 'forged=64', 'unset=64', ...under]);
  const holds = 'not the slot this process tree holds (1)';
  expect(dlockLines(result.stderr)).toEqual([
    `dlock: nest-slot-env: DLOCK_SLOT is "0", ${holds}: a nested run does not hand it on`,
    `dlock: nest-slot-env: DLOCK_SLOT is unset, ${holds}: a nested acquire does not hand it on`,
  ]);
  other.stop();
  expect((await other.result).code).toBe(0);
});
