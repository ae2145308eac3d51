// Durations as users write them (docs/reference/options.md#durations), and flock's habits at the
// top level, spawned as a user runs them against a real redis-server.

import { describe, expect, test } from 'vitest';
import { cleanEnv, DLOCK, dlock, runShell } from '../helpers/cli.js';
import { RedisServer } from '../../support/redis-server.mjs';
import { events } from '../fixtures/observe.js';
import { useRedisServer } from '../helpers/server.js';

let redis: RedisServer;
useRedisServer((server) => (redis = server));

describe('long durations: no limit of Node timers shows', () => {
  test('--once-per 30d (a monthly job) is taken, and the next run in the window is turned away', async () => {
    const first = await dlock(['run', '--redis', redis.url, '--once-per', '30d', 'monthly', '--', 'true']);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const second = await dlock(['run', '--redis', redis.url, '--once-per', '30d', '-E', '3', 'monthly', '--', 'true']);
    expect(second.code).toBe(3);
    expect(second.stderr).toMatch(/done until/);
    // Shown in days, as given: not "720h".
    expect(second.stderr).toContain('--once-per 30d');
  });

  test('bounds past 2^31 ms (--max-hold, --wait, --heartbeat 30d) do not fire at once', async () => {
    const result = await dlock([
      'run',
      '--redis',
      redis.url,
      '--log-format',
      'json',
      '--max-hold',
      '30d',
      '--heartbeat',
      '25d',
      '--wait',
      '30d',
      '--ttl',
      '3s',
      'long-bounds',
      '--',
      'sleep',
      '0.5',
    ]);
    // Node's setTimeout turns any delay over 2^31−1 ms into 1 ms, with a TimeoutOverflowWarning.
    expect(result.stderr).not.toMatch(/TimeoutOverflowWarning|does not fit/);
    expect(events(result.stderr).map((e) => e.event)).not.toContain('max-hold');
    expect(result.code).toBe(0);
  });
});

describe('the grammar of a duration', () => {
  test('--ttl " 30s " (spaces) is refused, as the grammar has no such form', async () => {
    const result = await dlock(['run', '--redis', redis.url, '--ttl', ' 30s ', 'spaced', '--', 'true']);
    expect(result.stderr).toBe('dlock: --ttl: not a duration; without the spaces: 30s (got " 30s ")\n');
    expect(result.code).toBe(64);
  });

  test.each(['1h30m', '1m30s', '500ms', '1h0m0s'])('Go-style %s (etcdctl, consul) is taken by --ttl', async (ttl) => {
    const result = await dlock([
      'run',
      '--redis',
      redis.url,
      '--ttl',
      ttl,
      'go-' + ttl,
      '--',
      'sh',
      '-c',
      'echo $DLOCK_TTL_MS',
    ]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const ms = { '1h30m': 5_400_000, '1m30s': 90_000, '500ms': 500, '1h0m0s': 3_600_000 }[ttl];
    expect(result.stdout).toBe(`${ms}\n`);
  });

  test('Go-style 1m30s is taken by --wait and --once-per too', async () => {
    const result = await dlock([
      'run',
      '--redis',
      redis.url,
      '-w',
      '1m30s',
      '--once-per',
      '1h0m0s',
      'go-w',
      '--',
      'true',
    ]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
  });
});

describe("flock's habits at the top level get the dlock form", () => {
  test('dlock k true: did you mean dlock run k -- true', async () => {
    const result = await dlock(['k', 'true']);
    expect(result.stderr).toBe("dlock: unknown command 'k' — did you mean: dlock run k -- true\n");
    expect(result.code).toBe(64);
  });

  test('dlock -n k cmd: did you mean dlock run -n k -- cmd', async () => {
    const result = await dlock(['-n', 'k', 'echo', 'hi there']);
    expect(result.stderr).toBe("dlock: unknown option '-n' — did you mean: dlock run -n k -- echo 'hi there'\n");
    expect(result.code).toBe(64);
  });

  test('dlock -w 5 -E 3 k -- cmd keeps the option values with their options', async () => {
    const result = await dlock(['-w', '5', '-E', '3', 'k', '--', 'make']);
    expect(result.stderr).toBe("dlock: unknown option '-w' — did you mean: dlock run -w 5 -E 3 k -- make\n");
    expect(result.code).toBe(64);
  });

  test("dlock -n k -c 'cmd' (flock's -c): did you mean dlock run -n k -- sh -c 'cmd'", async () => {
    const result = await dlock(['-n', 'k', '-c', 'make deploy']);
    expect(result.stderr).toBe("dlock: unknown option '-n' — did you mean: dlock run -n k -- sh -c 'make deploy'\n");
    expect(result.code).toBe(64);
  });

  test('a typo of a command keeps its suggestion', async () => {
    const result = await dlock(['rnu', 'k', 'true']);
    expect(result.stderr).toMatch(/Did you mean run\?/);
    expect(result.code).toBe(64);
  });
});

describe("flock's options are translated to dlock's, and every suggestion is itself a valid dlock command", () => {
  const cases: [string[], string][] = [
    [['--timeout', '5', 'k', 'true'], "unknown option '--timeout' — did you mean: dlock run -w 5 k -- true"],
    [
      ['-nw', '5', 'k', 'true'],
      "unknown option '-nw' — did you mean: dlock run -n k -- true (-w 5 dropped: -n wins, as in flock)",
    ],
    [
      ['-nw5', 'k', 'true'],
      "unknown option '-nw5' — did you mean: dlock run -n k -- true (-w 5 dropped: -n wins, as in flock)",
    ],
    [
      ['--nonblock', '-o', '-F', 'k', 'true'],
      "unknown option '--nonblock' — did you mean: dlock run -n k -- true " +
        '(-o and -F dropped: dlock runs the command as its child and hands it no lock descriptor)',
    ],
    [
      ['--nb', '--close', 'k', 'true'],
      "unknown option '--nb' — did you mean: dlock run -n k -- true (--close dropped: dlock runs the command as its child and hands it no lock descriptor)",
    ],
    [
      ['-s', '--wait=2.5', '-E', '3', '--verbose', 'k', '-c', 'echo hi'],
      "unknown option '-s' — did you mean: dlock run -s -w 2.5 -E 3 -v k -- sh -c 'echo hi'",
    ],
    [
      ['-x', 'k', '--conflict-exit-code', '9', 'true'],
      "unknown option '-x' — did you mean: dlock run -x -E 9 k -- true",
    ],
    [['-e', '--timeout=1', 'k', 'true'], "unknown option '-e' — did you mean: dlock run -x -w 1 k -- true"],
    [['k', '-n', 'true'], "unknown command 'k' — did you mean: dlock run -n k -- true"],
    // Issue 31 (review): the options, then -- before the key: no hint was given.
    [['-n', '--', 'k', 'true'], "unknown option '-n' — did you mean: dlock run -n k -- true"],
    [
      ['-w', '5', '--', 'k', '-c', 'echo hi'],
      "unknown option '-w' — did you mean: dlock run -w 5 k -- sh -c 'echo hi'",
    ],
    [
      ['-n', 'k', '--redis=redis://:secret@127.0.0.1:1', 'true'],
      "unknown option '-n' — did you mean: dlock run -n --redis=redis://:***@127.0.0.1:1 k -- true",
    ],
  ];

  test.each(cases)('dlock %j', async (argv, message) => {
    const result = await dlock(argv);
    expect(result.stderr).toBe(`dlock: ${message}\n`);
    expect(result.code).toBe(64);
  });

  test('flock -u has no dlock form: said so, with or without a command', async () => {
    for (const argv of [
      ['-u', 'k'],
      ['k1', '-u'],
      ['-n', 'k', '-u', 'true'],
    ]) {
      const result = await dlock(argv);
      expect(result.stderr, argv.join(' ')).toMatch(
        /^dlock: unknown (option '-\w+'|command 'k1') — flock's -u \(unlock\) has no dlock form: dlock run releases the lock when its command ends \(an acquired section: dlock release\)\n$/,
      );
      expect(result.code).toBe(64);
    }
  });

  test.each<[string[], string]>([
    // Issue 31 (review): these suggested `dlock run -w abc k -- true`, `-E 300`: themselves usage errors.
    [['-w', 'abc', 'k', 'true'], "unknown option '-w' — in dlock run: --wait: not a duration"],
    [['--timeout', 'abc', 'k', 'true'], "unknown option '--timeout' — in dlock run: --wait: not a duration"],
    [['-E', '300', 'k', 'true'], "unknown option '-E' — in dlock run: --conflict-exit-code: "],
    [['k', '-E', '300', 'true'], "unknown command 'k' — in dlock run: --conflict-exit-code: "],
    [['-n', '-t', '1x', 'k', 'true'], "unknown option '-n' — in dlock run: --ttl: not a duration"],
    // A password with a blank: refused by dlock run (it was suggested, masked), and masked in the refusal.
    [
      ['-n', 'k', '--redis=redis://:sec ret@127.0.0.1:1', 'true'],
      "unknown option '-n' — in dlock run: --redis: the URL contains whitespace or control characters " +
        '(got "redis://:***@127.0.0.1:1")',
    ],
  ])('dlock %j: a value dlock run refuses gets its error, not a suggestion', async (argv, message) => {
    const result = await dlock(argv);
    expect(result.stderr.startsWith(`dlock: ${message}`), result.stderr).toBe(true);
    expect(result.stderr).not.toMatch(/did you mean/);
    expect(result.code).toBe(64);
  });

  test("flock -c before the key (not flock's order) gets no suggestion: dlock run would refuse it", async () => {
    const result = await dlock(['-c', 'true', 'k', 'true']);
    expect(result.stderr).toBe("dlock: unknown option '-c'\n");
    expect(result.code).toBe(64);
  });

  test('every suggestion dlock prints runs (no 64) against a free redis', async () => {
    for (const [argv] of cases) {
      const { stderr } = await dlock(argv);
      const hint = /did you mean: (dlock run .*?)(?: \(.*\))?$/m
        .exec(stderr)![1]
        .replace(/--redis=\S*/, `--redis=${redis.url}`);
      const env = cleanEnv({ D: DLOCK, DLOCK_REDIS_URL: redis.url, HINT: hint });
      const result = await runShell('sh', ['-c', 'dlock() { "$D" "$@"; }; eval "$HINT"'], env);
      // The key is free: each runs its command, 0.
      expect(result.code, `${argv.join(' ')} -> ${hint}: ${result.stderr}`).toBe(0);
    }
  });
});
