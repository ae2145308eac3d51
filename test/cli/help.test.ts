// --help reads well at the width it is shown in: wrapped to $COLUMNS, or to 80 columns on a
// pipe, and only at spaces.

import { describe, expect, test } from 'vitest';
import { cleanEnv, dlock } from '../helpers/cli.js';
import { buildProgram, parseArgs } from '../../src/cli/program.js';

const COMMANDS = [
  'run',
  'acquire',
  'renew',
  'heartbeat',
  'status',
  'release',
  'hold',
  'unhold',
  'history',
  'doctor',
  'metrics',
  'serve',
  'completion',
  '__complete-keys',
  'help',
];
const HELPS = [['--help'], ...COMMANDS.map((command) => [command, '--help'])];

/** `dlock <args>` with COLUMNS set (or unset, for undefined); stdout is a pipe. */
async function help(args: readonly string[], columns: string | undefined): Promise<string> {
  const env = cleanEnv();
  delete env.COLUMNS;
  const result = await dlock([...args], { env: columns === undefined ? env : { ...env, COLUMNS: columns } });
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return result.stdout;
}

const widest = (text: string) => Math.max(...text.split('\n').map((line) => line.length));
const words = (text: string) => text.split(/\s+/).filter(Boolean);

test("COMMANDS is every command but the keeper (whose --help is dlock's own)", () => {
  const names = buildProgram({}, () => {}).commands.map((command) => command.name());
  expect(names.filter((name) => name !== '__keeper').sort()).toEqual([...COMMANDS].sort());
});

describe.each(HELPS.map((args) => [args.join(' '), args] as const))('dlock %s', (_name, args) => {
  test('fits in 80 columns with COLUMNS=80 and on a pipe without COLUMNS', async () => {
    for (const columns of ['80', undefined]) {
      const text = await help(args, columns);
      const long = text.split('\n').filter((line) => line.length > 80);
      expect(long, `COLUMNS=${columns}`).toEqual([]);
    }
  });

  test('fits any COLUMNS from 40 on, its Examples aside (command lines as written, within 80 columns)', async () => {
    // 56-63: a long word (redis+sentinel://h1,h2/<master>,) once stayed in a description column too narrow for it.
    for (const columns of [40, 50, 56, 60, 63, 70, 72, 79]) {
      const text = await help(args, String(columns));
      const [body, examples = ''] = text.split(/^Examples:\n/m);
      const long = body.split('\n').filter((line) => line.length > columns);
      expect(long, `COLUMNS=${columns}`).toEqual([]);
      expect(widest(examples), `COLUMNS=${columns}`).toBeLessThanOrEqual(80);
    }
  });

  test('breaks lines only between words, and uses a wider terminal', async () => {
    const [narrow, wide] = [await help(args, '80'), await help(args, '400')];
    expect(words(narrow)).toEqual(words(wide));
    if (widest(wide) > 80) expect(widest(wide)).toBeGreaterThan(widest(narrow));
  });
});

test('every --help fits every COLUMNS from 40 to 120, its Examples aside (in-process, each width)', () => {
  for (const args of HELPS) {
    for (let columns = 40; columns <= 120; columns++) {
      let text = '';
      try {
        parseArgs(args, { COLUMNS: String(columns) }, { writeOut: (out) => (text += out), writeErr: () => {} });
      } catch {
        // Help ends in a CommanderError (exit 0).
      }
      const body = text.split(/^Examples:\n/m)[0];
      const long = body.split('\n').filter((line) => line.length > columns);
      expect(long, `${args.join(' ')} at COLUMNS=${columns}`).toEqual([]);
    }
  }
});

describe('options are grouped, everyday ones first', () => {
  const headings = (text: string) => text.split('\n').filter((line) => /^(?:[A-Z][\w ]* )?[Oo]ptions:$/.test(line));
  const lineOf = (text: string, option: string) => text.split('\n').findIndex((line) => line.startsWith(`  ${option}`));

  test.each([
    [
      'run',
      [
        'Lock options:',
        'Waiting options:',
        'Command options:',
        'Monitoring options:',
        'Output options:',
        'Connection options:',
        'TLS options:',
      ],
    ],
    [
      'acquire',
      [
        'Lock options:',
        'Waiting options:',
        'Keeper options:',
        'Monitoring options:',
        'Output options:',
        'Connection options:',
        'TLS options:',
      ],
    ],
    ['status', ['Output options:', 'Connection options:', 'TLS options:']],
    ['release', ['Options:', 'Output options:', 'Connection options:', 'TLS options:']],
  ])('dlock %s --help', async (command, groups) => {
    const text = await help([command, '--help'], '80');
    expect(headings(text)).toEqual(groups);
    if (command === 'run' || command === 'acquire') {
      for (const everyday of ['-n, --no-wait', '-w, --wait', '-t, --ttl']) {
        expect(lineOf(text, everyday)).toBeGreaterThan(0);
        expect(lineOf(text, everyday)).toBeLessThan(lineOf(text, '--redis'));
      }
    }
    expect(lineOf(text, '--redis')).toBeLessThan(lineOf(text, '--tls-ca'));
  });
});

// heartbeat has one example; __complete-keys (Tab's, hidden) none.
const WITH_EXAMPLES = COMMANDS.filter((command) => !['help', 'heartbeat', '__complete-keys'].includes(command));
describe.each(WITH_EXAMPLES)('dlock %s --help', (command) => {
  test('ends with its exit codes, then two or three examples', async () => {
    const text = await help([command, '--help'], '80');
    const [, after] = text.split(/^Exit status:\n/m);
    expect(after, 'an "Exit status:" section').toBeDefined();
    const [codes, examples] = after!.split(/^\nExamples:\n/m);
    expect(codes).toMatch(/^ {2}(0|the command's) /);
    expect(codes).toMatch(/^ {2}64 /m);
    const comments = examples!.match(/^ {2}# /gm) ?? [];
    expect(comments.length).toBeGreaterThanOrEqual(2);
    expect(comments.length).toBeLessThanOrEqual(3);
    expect(examples).toMatch(new RegExp(`^ {2}(.*[ (])?dlock ${command} `, 'm'));
  });
});

test('no flag letter means two things across commands', async () => {
  const meanings = new Map<string, Set<string>>();
  for (const args of HELPS) {
    for (const [, short, long] of (await help(args, '80')).matchAll(/^ {2}(-\w), (--[\w-]+)/gm)) {
      meanings.set(short!, new Set([...(meanings.get(short!) ?? []), long!]));
    }
  }
  const twice = [...meanings]
    .filter(([, longs]) => longs.size > 1)
    .map(([short, longs]) => `${short}: ${[...longs].join(' ')}`);
  expect(twice).toEqual([]);
  expect([...meanings.get('-n')!]).toEqual(['--no-wait']);
});

test('dlock --help (or -h) before a command word is the whole help, with every command', async () => {
  const whole = await help(['--help'], '100');
  expect(await help(['--help', 'run'], '100')).toBe(whole);
  expect(await help(['-q', '-h', 'status'], '100')).toBe(whole);
});

test('a hidden command name without its underscores is a key of the flock form, as any unknown word', async () => {
  // `keeper` and `complete-keys` name hidden commands (__keeper, __complete-keys) only inside dlock.
  const keeper = await dlock(['keeper', 'x'], { env: cleanEnv() });
  expect([keeper.code, keeper.stderr]).toEqual([
    64,
    "dlock: unknown command 'keeper' — did you mean: dlock run keeper -- x\n",
  ]);
});

test('--help names the stop signal as --signal chooses it, not always SIGTERM', async () => {
  for (const command of ['run', 'acquire']) {
    const { stdout } = await dlock([command, '--help'], { env: cleanEnv({ COLUMNS: '300' }) });
    expect(stdout, command).not.toMatch(/SIGTERM and SIGKILL|\(SIGTERM, SIGKILL/);
    const lines = stdout.split('\n').filter((line) => /--kill-after <|--max-hold </.test(line));
    for (const line of lines) expect(line, command).toMatch(/--signal/);
  }
});
