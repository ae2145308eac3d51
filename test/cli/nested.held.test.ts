// Several locks at once: DLOCK_KEY, DLOCK_TOKEN, … describe the innermost one, and DLOCK_HELD
// lists the others the enclosing dlocks hold, so that a nested run or acquire at any depth and in
// any order finds its key's token (and checks it with the server), and each section of a script
// releases and renews by name. DLOCK_HELD is a hint only: what it says wrongly is never obeyed.
// Real redis-server, real dash, bash and zsh.

import { expect, test } from 'vitest';
import type { RedisServer } from '../../support/redis-server.mjs';
import { spawnDlock, tempDir } from '../fixtures/observe.js';
import { cleanEnv, DLOCK, dlock, runShell, type Result } from '../helpers/cli.js';
import { useRedisServer } from '../helpers/server.js';

let redis: RedisServer;
useRedisServer((server) => (redis = server));

const SHELLS = ['dash', 'bash', 'zsh'] as const;

const env = (extra: Record<string, string> = {}) =>
  cleanEnv({ D: DLOCK, R: redis.url, XDG_RUNTIME_DIR: tempDir(), ...extra });

/**
 * `<shell> -c script` with $D (dlock) and $R (the Redis URL); `d` is `dlock … --redis $R`.
 */
function shell(name: string, script: string, extra: Record<string, string> = {}): Promise<Result> {
  const helper = 'd() { cmd=$1; shift; "$D" "$cmd" --redis "$R" "$@"; }';
  return runShell(name, [...(name === 'zsh' ? ['-f'] : []), '-c', `${helper}\n${script}`], env(extra));
}

const status = async (key: string) => (await dlock(['status', '--redis', redis.url, key], { env: env() })).code;

test('dlock run a -- dlock run b -- dlock run a -- echo hi: the innermost runs under its grandparent', async () => {
  const run = (key: string) => ['run', '--redis', redis.url, '-n', key, '--'];
  const printed =
    'echo "hi $DLOCK_KEY $DLOCK_FENCING_TOKEN"; printf "%s\\n" "$DLOCK_HELD" | tr " " "\\n" | cut -d= -f1';
  const result = await spawnDlock(
    [...run('deep-a'), DLOCK, ...run('deep-b'), DLOCK, ...run('deep-a'), 'sh', '-c', printed],
    {
      env: env(),
    },
  ).result;
  expect(result.code, result.stderr).toBe(0);
  expect(result.stdout).toBe('hi deep-a 1\ndeep-b\n');
});

test.each(SHELLS)('%s: runs and sections of several keys nest in any order, each released by name', async (name) => {
  const result = await shell(
    name,
    `
    eval "$("$D" acquire --redis "$R" $K-a)" || exit 9
    eval "$("$D" acquire --redis "$R" $K-b)" || exit 8
    d run -n $K-a -- "$D" run --redis "$R" -n $K-c -- "$D" run --redis "$R" -n $K-b -- sh -c '
      eval "$("$D" acquire --redis "$R" -n $K-a)" || exit 7
      echo "inner $DLOCK_KEY $DLOCK_FENCING_TOKEN"
      "$D" run --redis "$R" -n $K-c -- sh -c "echo \\"c under \\$DLOCK_KEY\\""
      "$D" release --redis "$R" $K-a || exit 6
    '
    echo "chain=$?"
    d status $K-a >/dev/null; echo "a held=$?"
    d renew $K-a; echo "renew a=$?"
    d renew $K-b; echo "renew b=$?"
    d release $K-b; echo "release b=$?"
    d release $K-a; echo "release a=$?"
    d status $K-a >/dev/null; echo "a free=$?"
    d status $K-b >/dev/null; echo "b free=$?"
    `,
    { K: `s-${name}` },
  );
  expect(result.code, result.stderr).toBe(0);
  expect(result.stdout.trim().split('\n')).toEqual([
    `inner s-${name}-a 1`,
    `c under s-${name}-c`,
    'chain=0',
    'a held=0',
    'renew a=0',
    'renew b=0',
    'release b=0',
    'release a=0',
    'a free=1',
    'b free=1',
  ]);
});

test('two sections in one script: release a exits 0 and frees a; --json lists the enclosing lock in "held"', async () => {
  const result = await shell(
    'sh',
    `
    eval "$("$D" acquire --redis "$R" two-a)" || exit
    eval "$("$D" acquire --redis "$R" two-b)" || exit
    c=$("$D" acquire --redis "$R" --no-keeper --json two-c) || exit; echo "$c"
    d release --token "$(echo "$c" | sed 's/^{"key":"two-c","token":"\\([0-9a-f]*\\)".*/\\1/')" two-c; echo "c=$?"
    d release two-b; echo "b=$?"
    d release two-a; echo "a=$?"
    d status two-a >/dev/null; echo "a free=$?"
    `,
  );
  expect(result.code, result.stderr).toBe(0);
  const [json, ...codes] = result.stdout.trim().split('\n');
  expect(codes).toEqual(['c=0', 'b=0', 'a=0', 'a free=1']);
  const parsed = JSON.parse(json!) as { held: { key: string; token: string }[] };
  expect(parsed).toMatchObject({ key: 'two-c', fence: '1', ttl_ms: 30000 });
  expect(parsed.held.map(({ key }) => key)).toEqual(['two-b', 'two-a']);
  expect(await status('two-a')).toBe(1);
});

test("two nested sections in one shell: DLOCK_NESTED holds each key's token; their releases release nothing", async () => {
  const run = ['run', '--redis', redis.url, 'nn-a', '--', DLOCK, 'run', '--redis', redis.url, 'nn-b', '--', 'sh', '-c'];
  const script = `
    eval "$("$D" acquire --redis "$R" nn-a)" || exit 9
    eval "$("$D" acquire --redis "$R" nn-b)" || exit 8
    set -- $DLOCK_NESTED; echo "nested=$#"
    "$D" release --redis "$R" nn-b || exit 7
    "$D" release --redis "$R" nn-a || exit 6
    "$D" status --redis "$R" nn-a >/dev/null; echo "a held=$?"
    "$D" status --redis "$R" nn-b >/dev/null; echo "b held=$?"
  `;
  const result = await dlock([...run, script], { env: env() });
  expect(result.code, result.stderr).toBe(0);
  expect(result.stdout).toBe('nested=2\na held=0\nb held=0\n');
  expect(await status('nn-a')).toBe(1);
});

test('a forged DLOCK_HELD (garbage, huge, a wrong token) is never obeyed and never crashes', async () => {
  const holder = spawnDlock(['run', '--redis', redis.url, 'forged', '--', 'sleep', '20'], { env: env() });
  await expect.poll(() => status('forged'), { timeout: 10_000 }).toBe(0);
  const wrong = `forged=${'ab'.repeat(16)},1,30000,`;
  const garbage = '= =x ,,,, forged= forged=zz,1,2,3 \u00e9=\u00e9 {}=' + 'f'.repeat(32) + ',1,1,';
  const huge = `${'k=,=, '.repeat(20_000)}${wrong}`;
  for (const held of [wrong, garbage, huge]) {
    const run = await dlock(['run', '--redis', redis.url, '-n', 'forged', '--', 'echo', 'RAN'], {
      env: env({ DLOCK_HELD: held }),
    });
    // A well-formed entry whose token does not hold the key: the enclosing lock is gone (76);
    // none for the key: a holder like any other, turned away (75). Nothing runs either way.
    const code = held === garbage ? 75 : 76;
    expect(run.code, run.stderr).toBe(code);
    expect(run.stdout).toBe('');
    const acquire = await dlock(['acquire', '--redis', redis.url, '-n', '--no-keeper', 'forged'], {
      env: env({ DLOCK_HELD: held, DLOCK_NESTED: 'ab'.repeat(16) }),
    });
    expect(acquire.code, acquire.stderr).toBe(code);
    const release = await dlock(['release', '--redis', redis.url, 'forged'], { env: env({ DLOCK_HELD: held }) });
    expect(release.stderr).toMatch(/^dlock: /);
    expect(release.stderr).not.toMatch(/\n.*at /);
    expect([64, 76]).toContain(release.code);
    // The enclosing list a fresh run hands on keeps only well-formed entries.
    const printed = 'echo "[${DLOCK_HELD-unset}]"';
    const other = await dlock(['run', '--redis', redis.url, 'forged-other', '--', 'sh', '-c', printed], {
      env: env({ DLOCK_HELD: held }),
    });
    expect(other.code, other.stderr).toBe(0);
    expect(other.stdout).toBe(held === garbage ? '[unset]\n' : `[${wrong}]\n`);
  }
  expect(await status('forged')).toBe(0);
  holder.process.kill('SIGTERM');
  await holder.result;
});
