// argv + env -> what dlock decides to do, in-process and without any server (docs/reference/commands.md,
// docs/reference/options.md): a validated config, or a UsageError (exit 64) and its message.

import { CommanderError } from 'commander';
import { describe, expect, test } from 'vitest';
import { buildProgram, parseArgs, type Invocation } from '../../src/cli/program.js';
import type { Env } from '../../src/config/index.js';
import { DlockError, UsageError } from '../../src/errors.js';

/** parseArgs with help and version output captured instead of printed. */
function parse(
  argv: string[],
  env: Env = {},
): { invocation?: Invocation; error?: unknown; stdout: string; stderr: string } {
  const printed = { stdout: '', stderr: '' };
  const output = {
    writeOut: (text: string) => (printed.stdout += text),
    writeErr: (text: string) => (printed.stderr += text),
  };
  try {
    return { invocation: parseArgs(argv, env, output), ...printed };
  } catch (error) {
    return { error, ...printed };
  }
}

function usageError(argv: string[], env: Env = {}): UsageError {
  const { error, invocation } = parse(argv, env);
  expect(invocation, `${JSON.stringify(argv)} was accepted`).toBeUndefined();
  expect(error).toBeInstanceOf(UsageError);
  expect((error as DlockError).exitCode).toBe(64);
  return error as UsageError;
}

describe('run: options before the key, everything after the key is the command', () => {
  // [argv, env, expected subset of the run config]
  test.each<[string[], Env, Record<string, unknown>]>([
    [['run', 'build', 'make', '-n'], {}, { key: 'build', command: ['make', '-n'], waitMs: undefined }],
    [['run', 'mykey', 'ls', '-la'], {}, { key: 'mykey', command: ['ls', '-la'] }],
    [['run', 'k', 'echo', '-t', '5s', 'x'], {}, { command: ['echo', '-t', '5s', 'x'], ttlMs: 30_000 }],
    [['run', 'k', 'grep', '-v', 'x'], {}, { command: ['grep', '-v', 'x'], verbosity: 'normal' }],
    [['run', 'k', 'grep', '-q', 'x'], {}, { command: ['grep', '-q', 'x'], verbosity: 'normal' }],
    [
      ['run', 'k', 'curl', '--redis', 'x', '--help'],
      {},
      { command: ['curl', '--redis', 'x', '--help'], targets: [{ label: 'redis://127.0.0.1:6379' }] },
    ],
    [
      ['run', 'build', 'sh', '-c', 'echo "$@"', 'x', '-n'],
      {},
      { command: ['sh', '-c', 'echo "$@"', 'x', '-n'], waitMs: undefined },
    ],
    [['run', 'k', '--', 'make', '-n'], {}, { key: 'k', command: ['make', '-n'], waitMs: undefined }],
    [['run', 'k', '--', '-n'], {}, { command: ['-n'] }], // a command whose name starts with "-" goes after --
    [['run', 'k', '--', 'cmd', '--', 'x'], {}, { command: ['cmd', '--', 'x'] }],
    [['run', 'k', 'cmd', '--', 'x'], {}, { command: ['cmd', '--', 'x'] }],
    [['run', '-n', '-E', '0', 'k', 'make', '-n'], {}, { waitMs: 0, conflictExitCode: 0, command: ['make', '-n'] }],
    [
      ['run', '-t', '2s', '-w', '1m', 'k', 'echo', '-t', '9s', '-w', '3s'],
      {},
      { ttlMs: 2_000, waitMs: 60_000, command: ['echo', '-t', '9s', '-w', '3s'] },
    ],
    [['run', 'k', 'echo', '-t', '1s'], { DLOCK_TTL: '2s' }, { ttlMs: 2_000, command: ['echo', '-t', '1s'] }],
    [
      ['run', '--redis', 'redis://a:1', '--redis', 'redis://b:2', 'k', 'true'],
      {},
      { targets: [{ host: 'a' }, { host: 'b' }] },
    ],
    // A key starting with "-" comes after a first "--"; a second "--" before the command is optional.
    [['run', '--', '-key', '--', 'cmd'], {}, { key: '-key', command: ['cmd'] }],
    [['run', '--', '-key', 'cmd', '-x'], {}, { key: '-key', command: ['cmd', '-x'] }],
    [['run', '-v', '--', '-key', '--', '-cmd'], {}, { key: '-key', command: ['-cmd'], verbosity: 'verbose' }],
    // -q / -v may also come before the subcommand.
    [['-v', 'run', 'k', '--', 'true'], {}, { verbosity: 'verbose' }],
    [['--verbose', 'run', 'k', 'true'], {}, { verbosity: 'verbose' }],
    [['-q', 'run', 'k', 'true'], {}, { verbosity: 'quiet' }],
    [['-v', 'run', '-v', 'k', 'true'], {}, { verbosity: 'verbose' }],
    // Durations with a leading dot, as flock's -w .007.
    [['run', '-w', '.007', 'k', 'true'], {}, { waitMs: 7 }],
    [['run', '--ttl=.5s', 'k', 'true'], {}, { ttlMs: 500 }],
    [['run', '-w.5', 'k', 'true'], {}, { waitMs: 500 }],
  ])('%j %j', (argv, env, expected) => {
    const { invocation, error } = parse(argv, env);
    expect(error).toBeUndefined();
    expect(invocation).toMatchObject({ command: 'run', config: expected });
  });

  // [argv, env, message]
  test.each<[string[], Env, RegExp]>([
    // An option after the key is refused, not run as a command and not taken as dlock's.
    [['run', 'k', '-t', '5s', '--', 'true'], {}, /^"-t" comes after the key "k": options go before the key/],
    [['run', 'k', '-n', 'make'], {}, /^"-n" comes after the key "k"/],
    [['run', 'k', '--wait=1s', 'make'], {}, /^"--wait=1s" comes after the key/],
    [['run', '--', '-key', '-v', 'cmd'], {}, /^"-v" comes after the key "-key"/],
    [['run', 'k'], {}, /^no command to run/],
    [['run', 'k', '--'], {}, /^no command to run/],
    [['run'], {}, /^missing required argument 'key'/],
    [['run', '--frobnicate', 'k', '--', 'x'], {}, /^unknown option '--frobnicate'/],
    [['-t', '5s', 'run', 'k', 'x'], {}, /^unknown option '-t'/], // run's options go after "run"
    [['-q', '-v', 'run', 'k', 'x'], {}, /--quiet and --verbose: choose one/],
    [['-v', 'run', '-q', 'k', 'x'], {}, /--quiet and --verbose: choose one/],
    [['run', '-w', '1s', '-n', 'k', 'x'], {}, /--wait and --no-wait: choose one/],
    [['run', '-t', '5x', 'k', '--', 'x'], {}, /^--ttl: .*"5x"/],
    [['run', '-w', '.', 'k', 'x'], {}, /^--wait: .*"\."/],
    [['run', '-w', '5.', 'k', 'x'], {}, /^--wait: .*"5\."/],
    [['run', 'k', 'x'], { DLOCK_TTL: '..5' }, /^DLOCK_TTL: .*"\.\.5"/],
    [['run', 'a b', 'x'], {}, /^key: .*"a b"/],
    [['run', '--on-lost', 'panic', 'k', 'x'], {}, /^option '--on-lost <action>' argument 'panic' is invalid/],
  ])('%j %j is a usage error', (argv, env, message) => {
    expect(usageError(argv, env).message).toMatch(message);
  });

  test('a URL password echoed back by a parse error is masked', () => {
    const { message } = usageError(['run', '--redis-url=redis://u:hunter2@h:1', 'k', 'x']);
    expect(message).toMatch(/^unknown option '--redis-url=redis:\/\/u:\*\*\*@h:1'/);
    expect(message).not.toContain('hunter2');
  });

  test('nothing connects: the decision is made before any command runs', () => {
    // Port 1 on loopback: a connection would fail; parsing must not try.
    const { invocation } = parse(['run', '--redis', 'redis://127.0.0.1:1', 'k', 'true']);
    expect(invocation?.command).toBe('run');
    expect(typeof invocation?.run).toBe('function');
  });
});

describe('--slots and --shared', () => {
  test.each<[string[], Record<string, unknown>]>([
    [['run', 'k', 'true'], { mode: { kind: 'exclusive' }, slotted: false }],
    [['run', '--slots', '3', 'k', 'true'], { mode: { kind: 'slots', slots: 3 }, slotted: true }],
    [['run', '--slots', '1', 'k', 'true'], { mode: { kind: 'exclusive' }, slotted: true }],
    [['run', '--shared', 'k', 'true'], { mode: { kind: 'shared' }, slotted: false }],
    [['run', '-s', 'k', 'true'], { mode: { kind: 'shared' } }],
    [['run', 'k', 'grep', '-s', 'x'], { mode: { kind: 'exclusive' }, command: ['grep', '-s', 'x'] }],
    // flock's -x and -e: exclusive, which is the default.
    [['run', '-x', 'k', 'true'], { mode: { kind: 'exclusive' } }],
    [['run', '-e', 'k', 'true'], { mode: { kind: 'exclusive' } }],
    [['run', '--exclusive', '--slots', '1', 'k', 'true'], { mode: { kind: 'exclusive' } }],
    [['run', 'k', 'grep', '-x', '-e', 'x'], { mode: { kind: 'exclusive' }, command: ['grep', '-x', '-e', 'x'] }],
  ])('%j', (argv, expected) => {
    const { invocation, error } = parse(argv);
    expect(error).toBeUndefined();
    expect(invocation?.command === 'run' && invocation.config).toMatchObject(expected);
  });

  test.each<[string[], RegExp]>([
    [['run', '--slots', '0', 'k', 'true'], /--slots.*from 1 to 1000/],
    [['run', '--slots', '1001', 'k', 'true'], /from 1 to 1000/],
    [['run', '--slots', 'x', 'k', 'true'], /--slots/],
    [['run', '--shared', '--slots', '2', 'k', 'true'], /--shared and --slots: choose one/],
    [
      ['run', '--slots', '2', '--redis', 'redis://a:1', '--redis', 'redis://b:1', 'k', 'true'],
      /--slots needs one Redis .* not a Redlock quorum of 2/,
    ],
    [
      ['run', '--shared', '--redis', 'redis://a:1', '--redis', 'redis://b:1', '--redis', 'redis://c:1', 'k', 'true'],
      /--shared needs one Redis/,
    ],
    [['release', '--force', '--slot', '-1', 'k'], /--slot/],
    [['release', '--slot', '1', 'k'], /--slot needs --force/],
    [['release', '--token', '0123456789abcdef0123456789abcdef', '--exit-status', '256', 'k'], /^--exit-status: .*256/],
    [['release', '--token', '0123456789abcdef0123456789abcdef', '--exit-status', 'x', 'k'], /^--exit-status: /],
    [['release', '--force', '--exit-status', '0', 'k'], /^--exit-status is the owner's: not with --force$/],
    [['acquire', '--slots', '2', '--redis', 'redis://a:1', '--redis', 'redis://b:1', 'k'], /--slots needs one Redis/],
    [['run', '-x', '-s', 'k', 'true'], /^--exclusive and --shared: choose one$/],
    [['acquire', '-s', '-e', 'k'], /^--exclusive and --shared: choose one$/],
    [['run', '--exclusive', '--slots', '3', 'k', 'true'], /^--exclusive and --slots 3: choose one/],
    // flock's -c and -u: a one-line hint of the dlock way.
    [
      ['run', '-c', 'make deploy', 'k'],
      /^-c: dlock runs the command after the key, without a shell; .*dlock run <key> -- sh -c '<command>'$/,
    ],
    [['run', '-c'], /^-c: /],
    [['acquire', '-c', 'true', 'k'], /^-c: acquire takes no command; .*dlock run <key> -- sh -c/],
    [['run', '-u', 'k'], /^-u: dlock unlocks with its own command: dlock release <key> /],
    [['acquire', '-u', 'k'], /^-u: .*dlock release <key>/],
  ])('%j: 64', (argv, message) => {
    expect(usageError(argv).message).toMatch(message);
  });

  test('release --force --slot 2', () => {
    const { invocation } = parse(['release', '--force', '--slot', '2', 'k']);
    expect(invocation?.command).toBe('release');
  });
});

const T = '0123456789abcdef0123456789abcdef';
const T2 = 'fedcba9876543210fedcba9876543210';

describe('status, release, renew, completion', () => {
  test.each<[string[], Env, Record<string, unknown>]>([
    [['status', 'k', '--json'], {}, { command: 'status', key: 'k', json: true }],
    [['status'], {}, { command: 'status', key: undefined, json: false }],
    [['-v', 'status', 'k'], {}, { command: 'status', config: { verbosity: 'verbose' } }],
    [
      ['status', '-q', 'k'],
      { DLOCK_PREFIX: 'app:' },
      { command: 'status', config: { verbosity: 'quiet', prefix: 'app:' } },
    ],
    [['release', '-f', 'k'], {}, { command: 'release', key: 'k', force: true }],
    [['release', 'k', '--force'], {}, { command: 'release', key: 'k', force: true }],
    [['release', '--token', T, 'k'], {}, { command: 'release', key: 'k', force: false, token: T }],
    // DLOCK_TOKEN counts only where DLOCK_KEY names the key; --force ignores it.
    [['release', 'k'], { DLOCK_KEY: 'k', DLOCK_TOKEN: T }, { command: 'release', key: 'k', force: false, token: T }],
    [['release', '--token', T2, 'k'], { DLOCK_KEY: 'k', DLOCK_TOKEN: T }, { token: T2 }],
    [['release', '-f', 'k'], { DLOCK_KEY: 'k', DLOCK_TOKEN: T }, { force: true, token: undefined }],
    [['release', '--exit-status', '3', 'k'], { DLOCK_KEY: 'k', DLOCK_TOKEN: T }, { token: T, exitStatus: '3' }],
    [['release', 'k'], { DLOCK_KEY: 'k', DLOCK_TOKEN: T }, { exitStatus: undefined }],
    [['renew', 'k'], { DLOCK_KEY: 'k', DLOCK_TOKEN: T }, { command: 'renew', key: 'k', token: T }],
    [
      ['renew', '--token', T, '--redis', 'redis://h:1', 'k'],
      {},
      { command: 'renew', token: T, config: { targets: [{ host: 'h' }] } },
    ],
    [['-q', 'release', '-f', 'k'], {}, { command: 'release', config: { verbosity: 'quiet' } }],
    [['completion', 'zsh'], {}, { command: 'completion', shell: 'zsh' }],
    [['doctor'], {}, { command: 'doctor', ttlMs: 30_000, json: false }],
    [
      ['doctor', '--json', '-t', '5s', '--redis', 'redis://a', '--redis', 'redis://b'],
      {},
      { command: 'doctor', ttlMs: 5_000, json: true, config: { targets: [{ host: 'a' }, { host: 'b' }] } },
    ],
    [
      ['doctor'],
      { DLOCK_TTL: '2m', DLOCK_PREFIX: 'app:' },
      { command: 'doctor', ttlMs: 120_000, config: { prefix: 'app:' } },
    ],
    [['history', 'k'], {}, { command: 'history', key: 'k', count: 20, json: false }],
    [['history', '--count', '5', '--json', 'k'], {}, { command: 'history', key: 'k', count: 5, json: true }],
    [['run', '--once-per', '4m', 'k', 'true'], {}, { command: 'run', config: { keyOptions: { oncePerMs: 240_000 } } }],
    [
      ['run', '--once-per', '1d', '-t', '1d', 'k', 'true'],
      {},
      { command: 'run', config: { keyOptions: { oncePerMs: 86_400_000 }, ttlMs: 86_400_000 } },
    ],
    [['run', 'k', 'true'], {}, { command: 'run', config: { keyOptions: { oncePerMs: 0 } } }],
  ])('%j %j', (argv, env, expected) => {
    const { invocation, error } = parse(argv, env);
    expect(error).toBeUndefined();
    expect(invocation).toMatchObject(expected);
  });

  test.each<[string[], RegExp]>([
    [
      ['help', 'bogus'],
      /^unknown command "bogus" \(commands: run, acquire, renew, heartbeat, status, release, hold, unhold, history, doctor, metrics, serve, completion, help\)$/,
    ],
    [['doctor', '--ttl', '50ms'], /^--ttl: must be at least 100ms/],
    [['doctor', 'extra'], /^too many arguments/],
    [['history', '--count', '0', 'k'], /^--count: expected an integer from 1 to 1000 \(got "0"\)$/],
    // -n is --no-wait in run and acquire; history's count has no letter.
    [['history', '-n', '5', 'k'], /^-n: the number of entries is --count <n> \(-n is --no-wait in run and acquire\)$/],
    [
      ['history', '--redis', 'redis://a', '--redis', 'redis://b', 'k'],
      /^history needs one Redis .*Redlock quorum of 2: no history is kept$/,
    ],
    [['run', '--once-per', '0', 'k', 'true'], /^--once-per: must be greater than zero/],
    [['run', '--once-per', 'soon', 'k', 'true'], /^--once-per: not a duration/],
    [
      ['run', '--once-per', '1m', '--redis', 'redis://a', '--redis', 'redis://b', 'k', 'true'],
      /^--once-per needs one Redis .*Redlock quorum of 2/,
    ],
    [['bogus'], /^unknown command 'bogus'/],
    [['status', 'a{b'], /^key: .*"a\{b"/],
    [['status', 'k', 'extra'], /^too many arguments/],
    [['release'], /^missing required argument 'key'/],
    [['completion', 'tcsh'], /^command-argument value 'tcsh' is invalid/],
  ])('%j is a usage error', (argv, message) => {
    expect(usageError(argv).message).toMatch(message);
  });

  // [argv, env, message]
  test.each<[string[], Env, RegExp]>([
    [
      ['release', 'k'],
      {},
      /^release needs the owner token: --token, DLOCK_TOKEN with DLOCK_KEY=k, or a DLOCK_HELD entry for k .*dlock release --force k$/,
    ],
    [['release', 'k'], { DLOCK_KEY: 'other', DLOCK_TOKEN: T }, /^release needs the owner token/],
    [['renew', 'k'], { DLOCK_TOKEN: T }, /^renew needs the owner token/],
    [['release', '--token', 'xyz', 'k'], {}, /^--token: not an owner token .*\(got "xyz"\)$/],
    [['renew', 'k'], { DLOCK_KEY: 'k', DLOCK_TOKEN: 'nope' }, /^DLOCK_TOKEN: not an owner token/],
    [['release', '-f', '--token', T, 'k'], {}, /^--force and --token: choose one/],
    [['release', '--now', '--token', T, 'k'], {}, /^--now needs --force$/],
  ])('%j %j is a usage error', (argv, env, message) => {
    expect(usageError(argv, env).message).toMatch(message);
  });
});

describe("acquire: run's lock options, no command", () => {
  test.each<[string[], Env, Record<string, unknown>]>([
    [
      ['acquire', 'k'],
      {},
      { key: 'k', keeper: true, watchPid: undefined, format: 'sh', ttlMs: 30_000, waitMs: undefined, onLost: 'term' },
    ],
    [
      ['acquire', '-t', '2s', '-n', '-E', '0', '--on-lost', 'kill', '--pid', '42', '--format', 'json', 'k'],
      {},
      { ttlMs: 2_000, waitMs: 0, conflictExitCode: 0, onLost: 'kill', watchPid: 42, format: 'json' },
    ],
    [
      ['acquire', '--no-keeper', '--ttl', '30m', 'k'],
      { DLOCK_WAIT: '1m' },
      { keeper: false, ttlMs: 1_800_000, waitMs: 60_000, holderCmd: 'dlock acquire --no-keeper' },
    ],
    [
      ['-v', 'acquire', '--log-format', 'json', '--sync-replicas', '1', 'k'],
      {},
      { verbosity: 'verbose', logFormat: 'json', syncReplicas: 1 },
    ],
    // --json is every command's spelling; --format json stays for scripts written before it.
    [['acquire', '--json', 'k'], {}, { format: 'json' }],
    [['acquire', '--json', '--format', 'json', 'k'], {}, { format: 'json' }],
  ])('%j %j', (argv, env, expected) => {
    const { invocation, error } = parse(argv, env);
    expect(error).toBeUndefined();
    expect(invocation).toMatchObject({ command: 'acquire', config: expected });
  });

  test.each<[string[], RegExp]>([
    [['acquire'], /^missing required argument 'key'/],
    [['acquire', 'k', '--', 'true'], /^too many arguments/],
    [['acquire', '-w', '1s', '-n', 'k'], /--wait and --no-wait: choose one/],
    [['acquire', '--pid', '0', 'k'], /^--pid: expected an integer from 1 /],
    [['acquire', '--pid', '12', '--no-keeper', 'k'], /^--pid and --no-keeper: choose one/],
    [['acquire', '--format', 'yaml', 'k'], /^option '--format <format>' argument 'yaml' is invalid/],
    [['acquire', '--json', '--format', 'sh', 'k'], /^--json and --format sh: choose one$/],
    [['acquire', '--kill-after', '1s', 'k'], /^unknown option '--kill-after'/],
  ])('%j is a usage error', (argv, message) => {
    expect(usageError(argv).message).toMatch(message);
  });
});

describe('help and version: printed, then a CommanderError carrying the exit code', () => {
  function printed(argv: string[]): { exitCode: number; stdout: string; stderr: string } {
    const { error, stdout, stderr } = parse(argv);
    expect(error).toBeInstanceOf(CommanderError);
    return { exitCode: (error as CommanderError).exitCode, stdout, stderr };
  }

  test('--help shows the -- in the usage line, and the environment with both password variables', () => {
    const { exitCode, stdout, stderr } = printed(['--help']);
    expect(exitCode).toBe(0);
    expect(stderr).toBe('');
    expect(stdout).toMatch(/^Usage: dlock \[options\] run \[options\] <key> -- <command> \[args\.\.\.\]\n/);
    expect(stdout).toMatch(/^ {2}-v, --verbose /m);
    const environment = stdout.split(/^Environment:\n/m)[1]!.split(/^\S/m)[0]!;
    for (const variable of [
      'DLOCK_REDIS_URL',
      'DLOCK_REDIS_PASSWORD',
      'DLOCK_SENTINEL_PASSWORD',
      'DLOCK_TTL',
      'DLOCK_WAIT',
      'DLOCK_PREFIX',
      'DLOCK_LOG_FORMAT',
      'DLOCK_TLS_CA',
      'CI',
    ]) {
      expect(environment).toMatch(new RegExp(`^ {2}${variable} `, 'm'));
    }
  });

  test.each([
    [['help'], /^Usage: dlock \[options\] run /],
    [['help', 'run'], /^Usage: dlock run \[options\] <key> -- <command> \[args\.\.\.\]\n/],
    [['help', 'release'], /^ {2}-f, --force /m],
    [['run', '--help'], /^Usage: dlock run /],
    [['--version'], /^\d+\.\d+\.\d+/],
  ])('%j prints to stdout and exits 0', (argv, text) => {
    const { exitCode, stdout, stderr } = printed(argv);
    expect(exitCode).toBe(0);
    expect(stdout).toMatch(text);
    expect(stderr).toBe('');
  });

  test('no arguments: the help on stderr, and a non-zero code (main turns it into 64)', () => {
    const { exitCode, stdout, stderr } = printed([]);
    expect(exitCode).not.toBe(0);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/^Usage: dlock /);
  });
});

describe("a bad option value is named before a missing key or command (issue 31's -w k, for every option)", () => {
  // `dlock acquire -w k`: -w takes "k", and no key is left. The option's value is the mistake to name.
  const COMMANDS = ['run', 'acquire', 'renew', 'release', 'status', 'history', 'metrics', 'doctor', 'heartbeat'];
  /** Options for which "k" is a valid value: another value that is not. */
  const BAD: Record<string, string> = { '--prefix': 'a{b', '--on-event': '', '--reason': '' };
  const program = buildProgram({}, () => {});
  const cases = COMMANDS.flatMap((name) => {
    const command = program.commands.find((candidate) => candidate.name() === name)!;
    return command.options
      .filter((option) => (option.required || option.optional) && !option.hidden)
      .flatMap((option) =>
        [option.long, option.short]
          .filter((flag): flag is string => flag !== undefined)
          .map((flag): [string, string, string] => [name, flag, option.long!]),
      );
  });

  test('every command has its value-taking options listed', () => {
    expect(cases.length).toBeGreaterThan(40);
    expect(new Set(cases.map(([name]) => name))).toEqual(new Set(COMMANDS.filter((name) => name !== 'heartbeat')));
  });

  test.each(cases)('dlock %s %s k names %s', (name, flag, long) => {
    const value = BAD[long] ?? 'k';
    const argv = name === 'run' ? [name, flag, value, '--', 'true'] : [name, flag, value];
    const { message } = usageError(argv);
    expect(message).toContain(long);
    // The value quoted ("k" in ours, 'k' in commander's choices).
    expect(
      [`"${value}"`, `'${value}'`].some((quoted) => message.includes(quoted)),
      message,
    ).toBe(true);
  });

  test("run's missing command: the example uses the user's key, or <key> when the key came after --", () => {
    expect(usageError(['run', 'k']).message).toBe(
      'no command to run; write it after --, as in: dlock run k -- ./job.sh',
    );
    expect(usageError(['run', '-n', '--', 'true']).message).toBe(
      'no command to run: "true" was taken as the key (the first word after --); write the key before --, ' +
        'as in: dlock run <key> -- true',
    );
  });
});
