// Parsing like flock (docs/reference/commands.md), spawned as a user runs it against a real
// redis-server: dlock's options come before the key, everything after the key is the command's.

import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { dlock } from '../helpers/cli.js';
import { RedisServer } from '../../support/redis-server.mjs';
import { events, spawnDlock, tempDir } from '../fixtures/observe.js';
import { useRedisServer } from '../helpers/server.js';

let redis: RedisServer;
useRedisServer((server) => (redis = server));

/** The child prints each argument it got, one per line. */
const PRINT_ARGS = ['sh', '-c', 'printf "%s\\n" "$@"', 'x'];

describe('everything after the key is the command, with or without --', () => {
  test('dlock run mykey ls -la runs `ls -la`', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, '.hidden-file'), '');
    const result = await dlock(['run', '--redis', redis.url, 'mykey', 'ls', '-la', dir]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    // -a shows the dot file, -l the long format (a "total" line and permission columns).
    expect(result.stdout).toMatch(/^total \d+\n/);
    expect(result.stdout).toMatch(/^-rw\S* .*\.hidden-file$/m);
  });

  test.concurrent.for<[string, string[]]>([
    // Each case its own key: the two run at once, and one waiting for the other prints a status line.
    ['without --', ['build-a', ...PRINT_ARGS]],
    ['with --', ['build-b', '--', ...PRINT_ARGS]],
  ])("dlock's option letters after the key reach the command untouched (%s)", async ([, args], { expect }) => {
    // -n is not --no-wait, -t not --ttl, -v not --verbose, --redis not dlock's.
    const result = await dlock([
      'run',
      '--redis',
      redis.url,
      ...args,
      '-n',
      '-t',
      '5s',
      '-v',
      '--redis',
      'nowhere',
      '--',
      '-E',
    ]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('-n\n-t\n5s\n-v\n--redis\nnowhere\n--\n-E\n');
  });

  test('a command ending in -n still waits for a held lock: the -n is not --no-wait', async () => {
    const holder = spawnDlock(['run', '--redis', redis.url, '-v', 'waits', '--', 'sleep', '60']);
    await holder.waitFor('acquired waits');
    const waiter = spawnDlock(['run', '--redis', redis.url, '--log-format', 'json', 'waits', ...PRINT_ARGS, '-n']);
    await waiter.waitFor('"event":"waiting"');
    holder.process.kill('SIGTERM');
    const result = await waiter.result;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('-n\n');
    // (and a wait-status event if the holder was read before the lock came free)
    expect(
      events(result.stderr)
        .map((e) => e.event)
        .filter((event) => event !== 'wait-status'),
    ).toEqual(['waiting', 'acquired', 'released']);
  });

  test('an option after the key is a usage error, and nothing runs', async () => {
    const marker = join(tempDir(), 'ran');
    const result = await dlock(['run', '--redis', redis.url, 'k', '-t', '5s', '--', 'touch', marker]);
    expect(result.code).toBe(64);
    expect(result.stderr).toMatch(/^dlock: "-t" comes after the key "k": options go before the key[^\n]*\n$/);
    expect(result.stdout).toBe('');
    expect(existsSync(marker)).toBe(false);
  });

  test('-w with no duration before the key: the key is refused as a duration, as -wk refuses it', async () => {
    // Issue 31: "no command to run" (-w took "k", "--" ended the options, "true" was the key).
    for (const wait of [['-w', 'k'], ['-wk']]) {
      const result = await dlock(['run', '--redis', redis.url, ...wait, '--', 'true']);
      expect(result.stderr).toBe(
        'dlock: --wait: not a duration; use e.g. 250ms, 30s, 5m, 1h30m, 1d or a number of seconds (got "k")\n',
      );
      expect(result.code).toBe(64);
    }
  });

  test.concurrent.for<[string[], string]>([
    // Issue 31 (review): the option took the word meant as the key; the value is the mistake to name.
    [['run', '--once-per', 'k', '--', 'true'], '--once-per: not a duration'],
    [['run', '--ping-timeout', 'k', '--', 'true'], '--ping-timeout: not a duration'],
    [['run', '--ping-output', 'k', '--', 'true'], '--ping-output: not a size'],
    [['acquire', '-w', 'k'], '--wait: not a duration'],
    [['acquire', '-t', 'k'], '--ttl: not a duration'],
    [['acquire', '--max-hold', 'k'], '--max-hold: not a duration'],
    [['acquire', '--heartbeat', 'k'], '--heartbeat: not a duration'],
    [['release', '--slot', 'k'], '--slot: '],
    [['history', '--count', 'k'], '--count: '],
    [['renew', '--token', 'k'], '--token: not an owner token'],
  ])('dlock %j names the option, not a missing key or command', async ([argv, message], { expect }) => {
    const result = await dlock(argv);
    expect(result.stderr).toMatch(new RegExp(`^dlock: ${message}.*\\(got "k"\\)\\n$`));
    expect(result.code).toBe(64);
  });

  test('--kill-after over ttl/3: the refusal says why, naming the --signal', async () => {
    // Issue 31 (review): it ended "a command ignoring SIGTERM is killed before it ends".
    const plain = await dlock(['run', '--kill-after', '1m', 'k', '--', 'true']);
    expect(plain.stderr).toBe(
      'dlock: --kill-after: must be at most a third of the lease (10s of 30s), so that a command that ignores ' +
        'SIGTERM is killed before its lease ends (got "1m")\n',
    );
    const int = await dlock(['run', '--signal', 'INT', '-t', '3s', '--kill-after', '2s', 'k', '--', 'true']);
    expect(int.stderr).toBe(
      'dlock: --kill-after: must be at most a third of the lease (1s of 3s), so that a command that ignores ' +
        'SIGINT is killed before its lease ends (got "2s")\n',
    );
    expect([plain.code, int.code]).toEqual([64, 64]);
  });

  test('no command: the example uses the key given, or <key> when the only word came after --', async () => {
    const plain = await dlock(['run', 'nightly']);
    expect(plain.stderr).toBe('dlock: no command to run; write it after --, as in: dlock run nightly -- ./job.sh\n');
    const dashed = await dlock(['run', '-n', '--', 'true']);
    expect(dashed.stderr).toBe(
      'dlock: no command to run: "true" was taken as the key (the first word after --); write the key before --, ' +
        'as in: dlock run <key> -- true\n',
    );
    expect([plain.code, dashed.code]).toEqual([64, 64]);
  });

  test('a key starting with "-" after a first --, with or without a second one', async () => {
    for (const args of [
      ['--', '-odd-key', '--', 'sh', '-c', 'echo "$DLOCK_KEY"'],
      ['--', '-odd-key', 'sh', '-c', 'echo "$DLOCK_KEY"'],
    ]) {
      const result = await dlock(['run', '--redis', redis.url, ...args]);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout).toBe('-odd-key\n');
    }
  });
});

describe('before and around the subcommand', () => {
  test('dlock -v run k -- true: verbose given before the subcommand', async () => {
    const result = await dlock(['-v', 'run', '--redis', redis.url, 'k', '--', 'true']);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/^dlock: acquired k \(fence \d+, waited \d+ms\)\n/);
    expect(result.stderr).toMatch(/^dlock: released k \(fence \d+\)\n$/m);
  });

  test('dlock -q run -v: the -q before the subcommand counts (and the two clash)', async () => {
    const marker = join(tempDir(), 'ran');
    const result = await dlock(['-q', 'run', '--redis', redis.url, '-v', 'k', '--', 'touch', marker]);
    expect(result.code).toBe(64);
    expect(result.stderr).toBe('dlock: --quiet and --verbose: choose one\n');
    expect(existsSync(marker)).toBe(false);
  });

  test('dlock help bogus: one "dlock: " line, exit 64', async () => {
    const result = await dlock(['help', 'bogus']);
    expect(result.code).toBe(64);
    expect(result.stderr).toBe(
      'dlock: unknown command "bogus" (commands: run, acquire, renew, heartbeat, status, release, hold, unhold, history, doctor, metrics, serve, completion, help)\n',
    );
    expect(result.stdout).toBe('');
  });

  test('release -f is --force', async () => {
    const holder = spawnDlock(['run', '--redis', redis.url, '-v', 'forced', '--', 'sleep', '60']);
    await holder.waitFor('acquired forced');
    const result = await dlock(['release', '-f', '--redis', redis.url, 'forced']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^forced: released the lock held by /);
  });
});
