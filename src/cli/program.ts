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
import { environmentHelp, helpWidth, RUN_EXAMPLES } from './help.js';
import { declareHeartbeat } from './heartbeat.js';
import { declareHistory } from './history.js';
import type { CommandLine, Invocation } from './invocation.js';
import { declareKeeper } from './keeper.js';
import { declareMetrics } from './metrics.js';
import { declareRelease } from './release.js';
import { declareRenew } from './renew.js';
import { declareRun } from './run.js';
import { declareStatus } from './status.js';
import { VERSION } from '../version.js';

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
  const program = buildProgram(env, (decided) => (invocation = decided), output, argv);
  // Runs after commander's own listener has checked the value against the choices.
  if (onLogFormat) for (const command of program.commands) command.on('option:log-format', onLogFormat);
  try {
    program.parse(argv, { from: 'user' });
  } catch (error) {
    throw error instanceof UsageError ? withFlockForm(error, program, argv) : error;
  }
  if (!invocation) throw new Error(`no command decided for ${JSON.stringify(argv)}`);
  return invocation;
}

/** `argv`: the whole command line, which `acquire` hands to its keeper to parse again. */
export function buildProgram(
  env: Env,
  decide: (invocation: Invocation) => void,
  output: OutputConfiguration = {},
  argv: string[] = [],
): Command {
  // Set first: every subcommand inherits how errors and output are handled.
  const program: Command = new Command('dlock')
    .exitOverride(asUsageError)
    .configureOutput({
      getOutHelpWidth: () => helpWidth(env, process.stdout),
      getErrHelpWidth: () => helpWidth(env, process.stderr),
      ...output,
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
  // In --help's order; the hidden ones where they always were.
  declareRun(program, cli);
  declareAcquire(program, cli);
  declareKeeper(program, cli);
  declareRenew(program, cli);
  declareHeartbeat(program, cli);
  declareStatus(program, cli);
  declareRelease(program, cli);
  declareHistory(program, cli);
  declareDoctor(program, cli);
  declareMetrics(program, cli);
  declareCompletion(program, cli);
  declareCompleteKeys(program, cli);
  declareHelp(program);
  return program;
}

/**
 * flock's habits at the top level (`dlock -n k cmd`, `dlock k true`: no command named) get the
 * dlock form: `unknown command 'k' — did you mean: dlock run k -- true`. Left alone when commander
 * already suggests a command (a typo of one), or when no key and command follow.
 */
function withFlockForm(error: UsageError, program: Command, argv: string[]): UsageError {
  if (!/^unknown (option|command) /.test(error.message) || /Did you mean/.test(error.message)) return error;
  const names = new Set(program.commands.flatMap((command) => [command.name(), ...command.aliases()]));
  const run = program.commands.find((command) => command.name() === 'run');
  if (!run) return error;
  const options: string[] = [];
  let i = 0;
  for (; i < argv.length && argv[i].startsWith('-') && argv[i] !== '--' && argv[i] !== '-'; i++) {
    options.push(argv[i]);
    const option = run.options.find((candidate) => candidate.short === argv[i] || candidate.long === argv[i]);
    if (option?.required && i + 1 < argv.length) options.push(argv[++i]);
  }
  if (names.has(argv[i] ?? '')) return error;
  const [key, ...rest] = argv.slice(i);
  const given = rest[0] === '--' ? rest.slice(1) : rest;
  // flock's `-c 'cmd'` runs it through sh: dlock's form says so.
  const command = given[0] === '-c' || given[0] === '--command' ? ['sh', '-c', ...given.slice(1)] : given;
  if (key === undefined || key === '--' || command.length === 0) return error;
  const form = ['dlock', 'run', ...options.map(quoteWord), quoteWord(key), '--', ...command.map(quoteWord)].join(' ');
  return new UsageError(`${error.message} — did you mean: ${maskSecrets(form)}`);
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
