// The command line: the root command, then each command's declaration (src/cli/<command>.ts),
// which hands its raw options to src/config/ and names the command to run. Nothing here talks
// to Redis; commands are imported only when they run.

import { Command, CommanderError, type OutputConfiguration } from 'commander';
import type { Env, LogFormat, RawOptions } from '../config/index.js';
import { UsageError } from '../errors.js';
import { maskSecrets } from '../secrets.js';
import { joinLines } from '../untrusted.js';
import { declareAcquire } from './acquire.js';
import { declareCompleteKeys, declareCompletion } from './completion.js';
import { declareDoctor } from './doctor.js';
import { environmentHelp, fitHelp, formatItem, helpWidth, RUN_EXAMPLES } from './help.js';
import { declareHeartbeat } from './heartbeat.js';
import { declareHistory } from './history.js';
import { declareHold, declareUnhold } from './hold.js';
import type { CommandLine, Invocation } from './invocation.js';
import { declareKeeper } from './keeper.js';
import { declareMetrics } from './metrics.js';
import { declareRelease } from './release.js';
import { declareRenew } from './renew.js';
import { declareRun } from './run.js';
import { declareServe } from './serve.js';
import { declareStatus } from './status.js';
import { VERSION } from '../version.js';
import { KEEPER_COMMAND } from '../keeper/protocol.js';

export type { Invocation } from './invocation.js';

/** Commander's own parse errors ("error: unknown option ...") as UsageErrors; help and version pass. */
function asUsageError(error: CommanderError): never {
  if (error.exitCode === 0 || error.code === 'commander.help') throw error;
  throw new UsageError(joinLines(error.message.replace(/^error: /, '').trim()));
}

/**
 * argv + env -> the Invocation, without running anything. Throws a UsageError for bad input and
 * commander's CommanderError when it printed help or the version (exit code 0, or 1 for help
 * shown because nothing was asked).
 *
 * `onLogFormat` hears a valid --log-format as soon as it is parsed, so that a usage error found
 * later in the same command line can already be reported in that format.
 */
export function parseArgs(
  argv: string[],
  env: Env,
  output: OutputConfiguration = {},
  onLogFormat?: (format: LogFormat) => void,
): Invocation {
  let invocation: Invocation | undefined;
  const program = buildProgram(env, (decided) => (invocation = decided), output, argv, commandNamed(argv));
  // Runs after commander's own listener has checked the value against the choices.
  if (onLogFormat) for (const command of program.commands) command.on('option:log-format', onLogFormat);
  try {
    program.parse(argv, { from: 'user' });
  } catch (error) {
    throw error instanceof UsageError ? withFlockForm(error, program, argv, env) : error;
  }
  if (!invocation) throw new Error(`no command decided for ${JSON.stringify(argv)}`);
  return invocation;
}

/** The commands in --help's order; the hidden ones where they always were. */
const DECLARATIONS: [string, (program: Command, cli: CommandLine) => void][] = [
  ['run', declareRun],
  ['acquire', declareAcquire],
  [KEEPER_COMMAND, declareKeeper],
  ['renew', declareRenew],
  ['heartbeat', declareHeartbeat],
  ['status', declareStatus],
  ['release', declareRelease],
  ['hold', declareHold],
  ['unhold', declareUnhold],
  ['history', declareHistory],
  ['doctor', declareDoctor],
  ['metrics', declareMetrics],
  ['serve', declareServe],
  ['completion', declareCompletion],
  ['__complete-keys', declareCompleteKeys],
];

/**
 * The command `argv` names, when it names one right after dlock's own -q and -v (and -V, which
 * prints the version whatever follows): the first word, as commander reads it. Undefined for
 * anything else (no command, `help`, --help before the command, flock's habits, a typo), which
 * then gets the whole program, its help and its suggestions.
 */
function commandNamed(argv: string[]): string | undefined {
  const at = argv.findIndex((arg) => !/^(-[qvV]+|--quiet|--verbose|--version)$/.test(arg));
  const word = argv[at];
  return DECLARATIONS.some(([name]) => name === word) ? word : undefined;
}

/**
 * `argv`: the whole command line, which `acquire` hands to its keeper to parse again. `only`: the
 * command named there, the only one declared then (commander's set-up of every command's options
 * was a third of a plain run's start-up in the binary); without it, all of them.
 */
export function buildProgram(
  env: Env,
  decide: (invocation: Invocation) => void,
  output: OutputConfiguration = {},
  argv: string[] = [],
  only?: string,
): Command {
  // Set first: every subcommand inherits how errors and output are handled.
  const outWidth = output.getOutHelpWidth ?? (() => helpWidth(env, process.stdout));
  const errWidth = output.getErrHelpWidth ?? (() => helpWidth(env, process.stderr));
  const writeOut = output.writeOut ?? ((text: string) => process.stdout.write(text));
  const writeErr = output.writeErr ?? ((text: string) => process.stderr.write(text));
  const program: Command = new Command('dlock')
    .exitOverride(asUsageError)
    .configureOutput({
      getOutHelpWidth: outWidth,
      getErrHelpWidth: errWidth,
      ...output,
      // Help's own text (exit codes, environment, usage) fitted to the width too (help.ts).
      writeOut: (text) => writeOut(fitHelp(text, outWidth())),
      writeErr: (text) => writeErr(fitHelp(text, errWidth())),
      outputError: () => {},
    })
    .description('flock(1) for distributed systems: run a command while holding a Redis lock')
    .usage('[options] run [options] <key> -- <command> [args...]')
    .version(VERSION, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .helpCommand(false)
    // dlock's options end where the subcommand starts, and run's where the key is (passThroughOptions).
    .enablePositionalOptions()
    .option('-q, --quiet', 'print errors only')
    .option('-v, --verbose', 'print one line per lock event')
    // The commands' list shows a short summary beside each; `dlock help <command>` has the rest.
    .configureHelp({
      // A description column of 24 or more is wrapped beside its term; below that, under it (formatItem).
      minWidthToWrap: 24,
      formatItem,
      subcommandTerm: (command) => `${command.name()} ${command.usage().replace(/\[options\] ?/, '')}`.trim(),
    })
    .showSuggestionAfterError(true)
    .addHelpText('after', () => environmentHelp(program))
    .addHelpText('after', RUN_EXAMPLES);
  const cli: CommandLine = {
    env,
    argv,
    decide,
    withGlobals: (options) => ({ ...program.opts<RawOptions>(), ...options }),
    parse: (inner) => parseArgs(inner, env),
  };
  for (const [name, declare] of DECLARATIONS) if (only === undefined || name === only) declare(program, cli);
  if (only === undefined) declareHelp(program);
  return program;
}

/**
 * flock's habits at the top level (`dlock -n k cmd`, `dlock k true`: no command named) get the
 * dlock form: `unknown command 'k' — did you mean: dlock run k -- true`, flock(1)'s options
 * translated to dlock run's (FLOCK_OPTIONS), options before the key, the command after `--`. Left
 * alone when commander already suggests a command (a typo of one), when no key and command follow,
 * or when an option is neither flock's nor dlock run's: a suggestion is always a valid command.
 */
function withFlockForm(error: UsageError, program: Command, argv: string[], env: Env): UsageError {
  if (!/^unknown (option|command) /.test(error.message) || /Did you mean/.test(error.message)) return error;
  const names = new Set(program.commands.flatMap((command) => [command.name(), ...command.aliases()]));
  const run = program.commands.find((command) => command.name() === 'run');
  if (!run) return error;
  const before = flockOptions(run, argv, 0, false);
  if (!before || names.has(argv[before.end] ?? '')) return error;
  // `dlock -n -- k true`: the options end at --, the key follows, and no option after it.
  const dashes = argv[before.end] === '--';
  const key = argv[before.end + (dashes ? 1 : 0)];
  const after =
    key === undefined || key === '--'
      ? undefined
      : dashes
        ? { words: [], dropped: [], unlock: false, end: before.end + 2 }
        : flockOptions(run, argv, before.end + 1, true);
  if (before.unlock || after?.unlock) {
    const why = "flock's -u (unlock) has no dlock form: dlock run releases the lock when its command ends";
    return new UsageError(`${error.message} — ${why} (an acquired section: dlock release)`);
  }
  if (!after) return error;
  const rest = argv.slice(after.end);
  const given = rest[0] === '--' ? rest.slice(1) : rest;
  // flock's `-c 'cmd'` runs it through sh: dlock's form says so.
  const command = given[0] === '-c' || given[0] === '--command' ? ['sh', '-c', ...given.slice(1)] : given;
  if (command.length === 0) return error;
  const words = [...before.words, ...after.words];
  const dropped = [...before.dropped, ...after.dropped];
  const notes: string[] = [];
  const nonblock = words.some((word) => word[0] === '-n');
  const waits = words.filter((word) => word[0] === '-w');
  if (nonblock && waits.length > 0)
    notes.push(`${waits.map((w) => w.join(' ')).join(', ')} dropped: -n wins, as in flock`);
  if (dropped.length > 0) {
    const list = dropped.length === 1 ? dropped[0] : `${dropped.slice(0, -1).join(', ')} and ${dropped.at(-1)}`;
    notes.push(`${list} dropped: dlock runs the command as its child and hands it no lock descriptor`);
  }
  const options = words.filter((word) => !(nonblock && word[0] === '-w')).flat();
  // A value dlock run refuses (`-w abc`, `-E 300`): its error, not a suggestion that is itself a 64.
  const refused = refusal(['run', ...options, key, '--', ...command], env);
  if (refused) return new UsageError(`${error.message} — in dlock run: ${refused}`);
  const form = ['dlock', 'run', ...options.map(quoteWord), quoteWord(key), '--', ...command.map(quoteWord)].join(' ');
  const note = notes.length === 0 ? '' : ` (${notes.join('; ')})`;
  return new UsageError(`${error.message} — did you mean: ${maskSecrets(form)}${note}`);
}

/** The usage error dlock would give for `argv` (parsed, nothing run), or undefined when it is accepted. */
function refusal(argv: string[], env: Env): string | undefined {
  try {
    parseArgs(argv, env, { writeOut: () => {}, writeErr: () => {} });
    return undefined;
  } catch (error) {
    if (error instanceof UsageError) return error.message;
    throw error;
  }
}

/** flock(1)'s options (util-linux) as dlock run writes them: "" dropped (no use to dlock), "-u" none. */
const FLOCK_OPTIONS: Record<string, { to: string; value?: boolean }> = {
  '-n': { to: '-n' },
  '--nb': { to: '-n' },
  '--nonblock': { to: '-n' },
  '--nonblocking': { to: '-n' },
  '-w': { to: '-w', value: true },
  '--wait': { to: '-w', value: true },
  '--timeout': { to: '-w', value: true },
  '-E': { to: '-E', value: true },
  '--conflict-exit-code': { to: '-E', value: true },
  '-s': { to: '-s' },
  '--shared': { to: '-s' },
  '-x': { to: '-x' },
  '-e': { to: '-x' },
  '--exclusive': { to: '-x' },
  '--verbose': { to: '-v' },
  '-o': { to: '' },
  '--close': { to: '' },
  '-F': { to: '' },
  '--no-fork': { to: '' },
  '-u': { to: '-u' },
  '--unlock': { to: '-u' },
};

interface FlockOptions {
  /** dlock run's options, each with its value. */
  words: string[][];
  /** flock's options that mean nothing to dlock, as given. */
  dropped: string[];
  unlock: boolean;
  /** The index of the first word that is not an option. */
  end: number;
}

/**
 * The options from argv[from] on, flock's translated and dlock run's kept (grouped short ones
 * such as -nw5 split); `afterKey`: flock's -c starts the command there. Undefined at an option
 * that is neither flock's nor dlock run's.
 */
function flockOptions(run: Command, argv: string[], from: number, afterKey: boolean): FlockOptions | undefined {
  const found: FlockOptions = { words: [], dropped: [], unlock: false, end: from };
  let i = from;
  const take = (name: string, inline: string | undefined): boolean => {
    const flock = FLOCK_OPTIONS[name];
    if (flock) {
      const value = flock.value ? (inline ?? argv[++i]) : undefined;
      if (flock.value && value === undefined) return false;
      if (flock.to === '-u') found.unlock = true;
      else if (flock.to === '') found.dropped.push(name);
      // flock's -w 0 is its -n.
      else if (flock.to === '-w' && Number(value) === 0) found.words.push(['-n']);
      else found.words.push(value === undefined ? [flock.to] : [flock.to, value]);
      return true;
    }
    const option = run.options.find((candidate) => candidate.short === name || candidate.long === name);
    // Not run's hidden -c and -u either: they only answer with a hint (options.ts, flockHints).
    if (!option || option.hidden) return false;
    const value = option.required ? (inline ?? argv[++i]) : undefined;
    if (option.required && value === undefined) return false;
    found.words.push(value === undefined ? [name] : inline === undefined ? [name, value] : [`${name}=${value}`]);
    return true;
  };
  for (; i < argv.length; i++) {
    const word = argv[i];
    if (!word.startsWith('-') || word === '-' || word === '--') break;
    if (afterKey && (word === '-c' || word === '--command')) break;
    if (word.startsWith('--')) {
      const eq = word.indexOf('=');
      if (!take(eq < 0 ? word : word.slice(0, eq), eq < 0 ? undefined : word.slice(eq + 1))) return undefined;
      continue;
    }
    // -nw5, -nw 5, -sn: one letter at a time; a letter taking a value takes the rest of the word, else the next.
    for (let j = 1; j < word.length; j++) {
      const name = `-${word[j]}`;
      const valued = FLOCK_OPTIONS[name]?.value ?? run.options.find((o) => o.short === name)?.required;
      const rest = word.slice(j + 1);
      if (!take(name, valued && rest !== '' ? rest : undefined)) return undefined;
      if (valued) break;
    }
  }
  found.end = i;
  return found;
}

/** A word as a POSIX shell reads it back: bare when plain, else single-quoted. */
function quoteWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Commander's own help command prints the whole help for an unknown name; this one says so. */
function declareHelp(program: Command): void {
  program
    .command('help')
    .description('show help for a command')
    .usage('[command]')
    .argument('[command]', 'a command')
    .action((name: string | undefined) => {
      if (name === undefined) program.help();
      const commands = program.createHelp().visibleCommands(program);
      const command = commands.find((candidate) => candidate.name() === name);
      if (!command)
        throw new UsageError(
          `unknown command ${JSON.stringify(name)} (commands: ${commands.map((c) => c.name()).join(', ')})`,
        );
      command.help();
    });
}
