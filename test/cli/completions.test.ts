// Shell completions: each script is loaded into the real shell and asked what it offers,
// the way a Tab press would (bash's readline and zsh's compinit over zpty, fish `complete -C`).
// The scripts are generated from the program (npm run build:completions); installed with the
// lines `dlock completion --help` gives; lock names come from a real redis-server.

import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { RedisServer } from '../../support/redis-server.mjs';
import { cleanEnv, DLOCK, dlock } from '../helpers/cli.js';

type Shell = 'bash' | 'zsh' | 'fish';
const SHELLS: Shell[] = ['bash', 'zsh', 'fish'];
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const script = (shell: Shell) => join(ROOT, 'completions', `dlock.${shell}`);

// A `dlock` and a `node` first on PATH that leave a mark if a Tab press ever runs them, and
// `dlockprobe`, a command name found nowhere else, for completing the command after the key.
const sandbox = mkdtempSync(join(tmpdir(), 'dlock-completions-'));
const spawnedMark = join(sandbox, 'spawned');
const stubs = join(sandbox, 'bin');
mkdirSync(stubs);
for (const name of ['dlock', 'node', 'dlockprobe']) {
  writeFileSync(join(stubs, name), `#!/bin/sh\necho "${name} $*" >> '${spawnedMark}'\n`);
  chmodSync(join(stubs, name), 0o755);
}
// The real dlock (and node), for the lock names a Tab press asks `dlock __complete-keys` for.
const realBin = join(sandbox, 'real-bin');
mkdirSync(realBin);
symlinkSync(DLOCK, join(realBin, 'dlock'));
symlinkSync(process.execPath, join(realBin, 'node'));
const files = join(sandbox, 'files');
mkdirSync(files);
writeFileSync(join(files, 'input-file.txt'), '');
afterAll(() => rmSync(sandbox, { recursive: true, force: true }));

const FISH_DRIVER = `
test -n "$argv[1]"; and source $argv[1]
for line in $argv[2..-1]
  complete -C "$line" | string split -f1 \\t
  echo -- --end--
end`;

interface Driver {
  plainBash?: boolean;
  zshFpath?: string;
  /** A HOME where the install lines ran: the shell finds the script there on its own. */
  installedIn?: string;
  /** The real dlock on PATH, with DLOCK_REDIS_URL pointing at this server. */
  redisUrl?: string;
}

/** What the shell offers for the last word of each command line. */
function complete(shell: Shell, lines: string[], options: Driver = {}): string[][] {
  const installed = options.installedIn !== undefined;
  const bashMode = installed ? 'installed' : options.plainBash ? 'plain' : 'with-bash-completion';
  const zshTarget = installed ? 'zshrc' : (options.zshFpath ?? script('zsh'));
  const run = {
    bash: () => ['zsh', ['-f', join(ROOT, 'test/helpers/bash-capture.zsh'), bashMode, script('bash'), ...lines]],
    fish: () => ['fish', ['-c', FISH_DRIVER, installed ? '' : script('fish'), ...lines]],
    zsh: () => ['zsh', ['-f', join(ROOT, 'test/helpers/zsh-capture.zsh'), zshTarget, ...lines]],
  }[shell]() as [string, string[]];
  const { XDG_CONFIG_HOME: _config, XDG_DATA_HOME: _data, ...inherited } = cleanEnv();
  const home = installed
    ? { HOME: options.installedIn }
    : { HOME: sandbox, XDG_CONFIG_HOME: sandbox, XDG_DATA_HOME: sandbox };
  const path = `${options.redisUrl ? `${realBin}:` : ''}${stubs}:${process.env.PATH}`;
  const result = spawnSync(...run, {
    cwd: files,
    encoding: 'utf8',
    timeout: 20_000,
    env: { ...inherited, ...home, PATH: path, ...(options.redisUrl ? { DLOCK_REDIS_URL: options.redisUrl } : {}) },
  });
  if (result.status !== 0)
    throw new Error(`${shell} completion driver failed (${result.status ?? result.signal}): ${result.stderr}`);
  const spawned = existsSync(spawnedMark) ? readFileSync(spawnedMark, 'utf8') : '';
  rmSync(spawnedMark, { force: true });
  expect(spawned, 'a Tab press ran a program').toBe('');
  const groups = result.stdout.split('--end--\n').slice(0, -1);
  expect(groups).toHaveLength(lines.length);
  return groups.map((group) => [...new Set(group.split('\n').filter(Boolean))]);
}

/** The options `dlock [command] --help` lists, short and long, in whichever group of options. */
async function helpOptions(command?: string): Promise<string[]> {
  const { stdout, code } = await dlock(command ? ['help', command] : ['--help']);
  expect(code).toBe(0);
  const listed = [...stdout.matchAll(/^ {2}(?:(-\w), )?(--[\w-]+)/gm)];
  expect(listed.length).toBeGreaterThan(0);
  return listed.flatMap(([, short, long]) => (short ? [short, long!] : [long!]));
}

const sorted = (values: string[]) => [...values].sort();
const options = (values: string[]) => sorted(values.filter((value) => value.startsWith('-') && value !== '--'));

// Command line -> what must be offered (exactly, or at least `includes`), and what must not;
// per shell where they differ (fish completes `--opt=value` as a whole).
type Expected = { exactly?: string[]; includes?: string[]; excludes?: string[] };
const CASES: (Expected & { line: string } & { [shell in Shell]?: Expected })[] = [
  {
    line: 'dlock ',
    exactly: [
      'acquire',
      'completion',
      'doctor',
      'heartbeat',
      'help',
      'history',
      'hold',
      'metrics',
      'release',
      'renew',
      'run',
      'serve',
      'status',
      'unhold',
    ],
  },
  { line: 'dlock re', exactly: ['release', 'renew'] },
  { line: 'dlock acquire --format ', exactly: ['json', 'sh'] },
  { line: 'dlock release --tok', exactly: ['--token'] },
  { line: 'dlock run --on-lost ', exactly: ['ignore', 'kill', 'term'] },
  { line: 'dlock run -v --on-lost k', exactly: ['kill'] },
  { line: 'dlock status --log-format ', exactly: ['json', 'text'] },
  { line: 'dlock release --log-format j', exactly: ['json'] },
  { line: 'dlock completion ', exactly: ['bash', 'fish', 'zsh'] },
  { line: 'dlock help ', includes: ['acquire', 'completion', 'doctor', 'release', 'renew', 'run', 'status'] },
  { line: 'dlock release --f', exactly: ['--force'] },
  { line: 'dlock status --j', exactly: ['--json'] },
  { line: 'dlock doctor --t', exactly: ['--tls-ca', '--tls-cert', '--tls-key', '--ttl'] },
  { line: 'dlock metrics --l', exactly: ['--listen', '--log-format'] },
  { line: 'dlock run --redis ', excludes: ['--prefix', 'run'] },
  // After --: the child's command line, completed as a command of its own.
  { line: 'dlock run k -- ech', includes: ['echo'], excludes: ['--redis'] },
  { line: 'dlock run -t 5s --on-lost kill k -- ech', includes: ['echo'] },
  { line: 'dlock run -q -- -odd-key -- ech', includes: ['echo'] },
  { line: 'dlock run -- -odd-key ech', includes: ['echo'] },
  { line: 'dlock run k -- ls --', includes: ['--all'], excludes: ['--redis', '--ttl'] },
  { line: 'dlock run k -- cat input-f', includes: ['input-file.txt'] },
  { line: 'dlock run k -- dlock run --on-lost ', exactly: ['ignore', 'kill', 'term'] },
  { line: 'dlock status --tls-ca input-f', includes: ['input-file.txt'] },
  // Any command on PATH, not only builtins.
  { line: 'dlock run k -- dlockpr', exactly: ['dlockprobe'] },
  // An --opt=value, or a URL with a port (bash splits words at = and :), before the key.
  { line: 'dlock run --ttl=5s k -- dlockpr', exactly: ['dlockprobe'] },
  { line: 'dlock run --ttl=5s --on-lost=kill k -- ls --al', includes: ['--all'] },
  { line: 'dlock run --redis=redis://127.0.0.1:6379 k -- ls --al', includes: ['--all'] },
  { line: 'dlock run --redis redis://127.0.0.1:6379 k -- dlockpr', exactly: ['dlockprobe'] },
  { line: 'dlock run --redis redis://127.0.0.1:6379 k dlockpr', exactly: ['dlockprobe'] },
  { line: 'dlock run --redis=redis://127.0.0.1:6379 --ttl 5s k cat input-f', includes: ['input-file.txt'] },
  { line: 'dlock run --on-lost=k', exactly: ['kill'], fish: { exactly: ['--on-lost=kill'] } },
  // After the key: -- or the command; everything after the command word is the command's.
  { line: 'dlock run k ', includes: ['--', 'dlockprobe'], excludes: ['--redis'] },
  { line: 'dlock run -w 1m k -', includes: ['--'], excludes: ['--redis', '--ttl'] },
  { line: 'dlock run -w 1m k --x', excludes: ['--', '--redis'] },
  { line: 'dlock run k dlockpr', exactly: ['dlockprobe'] },
  { line: 'dlock run -t 5s k ls --', includes: ['--all'], excludes: ['--redis', '--ttl'] },
  { line: 'dlock run k cat input-f', includes: ['input-file.txt'] },
  { line: 'dlock run k dlock run --on-lost ', exactly: ['ignore', 'kill', 'term'] },
  { line: 'dlock run k dlock run -t 5s k2 dlockpr', exactly: ['dlockprobe'] },
  { line: 'dlock run k make -n -', excludes: ['--', '--redis', '--ttl'] },
  // A global -v or -q before the command.
  {
    line: 'dlock -v ',
    exactly: [
      'acquire',
      'completion',
      'doctor',
      'heartbeat',
      'help',
      'history',
      'hold',
      'metrics',
      'release',
      'renew',
      'run',
      'serve',
      'status',
      'unhold',
    ],
  },
  { line: 'dlock -v run --on-lost ', exactly: ['ignore', 'kill', 'term'] },
  { line: 'dlock -q run -t 5s k -- dlockpr', exactly: ['dlockprobe'] },
  { line: 'dlock -v run k dlockpr', exactly: ['dlockprobe'] },
  { line: 'dlock -q status --j', exactly: ['--json'] },
];

describe.each(SHELLS)('%s', (shell) => {
  let results: Map<string, string[]>;
  beforeAll(() => {
    const lines = CASES.map((c) => c.line);
    results = new Map(complete(shell, lines).map((offered, index) => [lines[index]!, offered]));
  });

  test('`dlock completion` prints the script in completions/, byte for byte', async () => {
    const { code, stdout } = await dlock(['completion', shell]);
    expect(code).toBe(0);
    expect(stdout).toBe(readFileSync(script(shell), 'utf8'));
  });

  test('the script parses', () => {
    const check = { bash: ['bash', '-n'], zsh: ['zsh', '-n'], fish: ['fish', '--no-execute'] }[shell];
    const result = spawnSync(check[0]!, [check[1]!, script(shell)], { encoding: 'utf8' });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  test.each(CASES)('$line', (expected) => {
    const { line, exactly, includes, excludes } = { ...expected, ...expected[shell] };
    const offered = results.get(line)!;
    if (exactly) expect(sorted(offered)).toEqual(sorted(exactly));
    for (const value of includes ?? []) expect(offered).toContain(value);
    for (const value of excludes ?? []) expect(offered).not.toContain(value);
  });

  test('offers every option of every command that --help lists, and no other', async () => {
    const commands = [
      undefined,
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
    ];
    const offered = complete(
      shell,
      commands.map((command) => (command ? `dlock ${command} -` : 'dlock -')),
    );
    for (const [index, command] of commands.entries()) {
      expect(options(offered[index]!), `dlock ${command ?? ''} -<Tab>`).toEqual(sorted(await helpOptions(command)));
    }
  });
});

test('bash works without bash-completion too', () => {
  const [onLost, onLostSplit, child, afterKey, afterTtl, afterUrl, file, option] = complete(
    'bash',
    [
      'dlock run --on-lost ',
      'dlock run --on-lost=k',
      'dlock run k -- ech',
      'dlock run -w 1m k ',
      'dlock run --ttl=5s k dlockpr',
      'dlock -v run --redis redis://127.0.0.1:6379 k -- dlockpr',
      'dlock run k cat input-f',
      'dlock run k -',
    ],
    { plainBash: true },
  );
  expect(sorted(onLost!)).toEqual(['ignore', 'kill', 'term']);
  expect(onLostSplit).toEqual(['kill']);
  expect(child).toContain('echo');
  expect(afterKey).toContain('--');
  expect(afterKey).toContain('dlockprobe');
  expect(afterTtl).toEqual(['dlockprobe']);
  expect(afterUrl).toEqual(['dlockprobe']);
  expect(file).toEqual(['input-file.txt']);
  expect(option).toEqual(['--']);
});

test('zsh works autoloaded from $fpath as _dlock', () => {
  const fpath = join(sandbox, 'fpath');
  mkdirSync(fpath);
  copyFileSync(script('zsh'), join(fpath, '_dlock'));
  const [commands, onLost] = complete('zsh', ['dlock ', 'dlock run --on-lost '], { zshFpath: fpath });
  expect(sorted(commands!)).toEqual([
    'acquire',
    'completion',
    'doctor',
    'heartbeat',
    'help',
    'history',
    'hold',
    'metrics',
    'release',
    'renew',
    'run',
    'serve',
    'status',
    'unhold',
  ]);
  expect(sorted(onLost!)).toEqual(['ignore', 'kill', 'term']);
});

test('completions/ is what `npm run build:completions` makes of the commands and options in src/cli/', () => {
  const check = [join(ROOT, 'scripts/build-completions.mjs'), '--check'];
  const result = spawnSync(process.execPath, check, { encoding: 'utf8' });
  expect(result.stderr).toBe('');
  expect(result.status).toBe(0);
});

describe('lock names, from the Redis in DLOCK_REDIS_URL', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await RedisServer.start();
    for (const key of ['deploy-prod', 'deploy-staging', 'nightly']) {
      expect((await dlock(['acquire', '--redis', server.url, '--no-keeper', '--ttl', '1m', key])).code).toBe(0);
    }
  }, 30_000);
  afterAll(() => server?.close());

  test.each(SHELLS)('%s', (shell) => {
    const lines = [
      'dlock status dep',
      'dlock run -t 5s dep',
      'dlock run -- n',
      'dlock -v release --force ',
      'dlock history n',
    ];
    // Redis gets 200 ms to answer a Tab (it never waits longer): on a loaded machine one Tab can
    // come back empty, and its user presses it again. Up to three presses here.
    let results = complete(shell, lines, { redisUrl: server.url });
    for (let press = 2; press <= 3 && results.some((names) => !names?.length); press++)
      results = complete(shell, lines, { redisUrl: server.url });
    const [status, run, afterDashes, release, history] = results;
    expect(sorted(status!)).toEqual(['deploy-prod', 'deploy-staging']);
    expect(sorted(run!)).toEqual(['deploy-prod', 'deploy-staging']);
    expect(afterDashes).toEqual(['nightly']);
    expect(sorted(release!)).toEqual(['deploy-prod', 'deploy-staging', 'nightly']);
    expect(history).toEqual(['nightly']);
  });
});

describe('installed with the lines `dlock completion --help` gives, in a fresh HOME', () => {
  test.each(SHELLS)('%s', async (shell) => {
    const { stdout, code } = await dlock(['completion', '--help']);
    expect(code).toBe(0);
    const install = stdout.split(`  # ${shell}\n`)[1]?.split('\n\n')[0]?.trim().split(/\n\s*/) ?? [];
    expect(install.length).toBeGreaterThan(1);
    const home = mkdtempSync(join(sandbox, `home-${shell}-`));
    // Typed into the shell itself, with the real dlock on PATH.
    const env = { PATH: `${realBin}:${process.env.PATH}`, HOME: home };
    const typed = spawnSync(shell, ['-c', install.join('\n')], { encoding: 'utf8', env });
    expect(typed.stderr).toBe('');
    expect(typed.status).toBe(0);
    const lines = ['dlock ru', 'dlock run --on-lost ', 'dlock status --js'];
    const [commands, onLost, json] = complete(shell, lines, { installedIn: home });
    expect(commands).toEqual(['run']);
    expect(sorted(onLost!)).toEqual(['ignore', 'kill', 'term']);
    expect(json).toEqual(['--json']);
  });
});
