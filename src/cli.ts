// The command line: declares and normalises options, then calls a plain command function.
// Nothing here talks to Redis; commands are imported only when they run.

import { Argument, Command, CommanderError, Option, type OutputConfiguration } from 'commander';
import { HISTORY_MAX } from './lock/scripts.js';
import {
  ACQUIRE_FORMATS,
  acquireConfig,
  connectionConfig,
  DEFAULTS,
  historyConfig,
  historyCount,
  leaseTtl,
  LOG_FORMATS,
  ON_LOST,
  ownerToken,
  runConfig,
  slotNumber,
  validateKey,
  type AcquireConfig,
  type ConnectionConfig,
  type Env,
  type LogFormat,
  type RawOptions,
  type RunConfig,
} from './config/index.js';
import { environmentHelp, HELP_AFTER, helpWidth, RUN_EXAMPLES } from './cli-help.js';
import { UsageError } from './errors.js';
import { KEEPER_COMMAND, keeperRequest } from './keeper/protocol.js';
import { joinLines } from './untrusted.js';

declare const __DLOCK_VERSION__: string | undefined;
export const VERSION = typeof __DLOCK_VERSION__ === 'string' ? __DLOCK_VERSION__ : '0.0.0-dev';

type Shell = 'bash' | 'zsh' | 'fish';

/** What the CLI decided to do: a command, its validated options, and how to run it. */
export type Invocation =
  | { command: 'run'; config: RunConfig; run: () => Promise<number> }
  | { command: 'status'; config: ConnectionConfig; key: string | undefined; json: boolean; run: () => Promise<number> }
  | { command: 'acquire'; config: AcquireConfig; run: () => Promise<number> }
  | { command: 'keeper'; config: AcquireConfig; run: () => Promise<number> }
  | { command: 'renew'; config: ConnectionConfig; key: string; token: string; run: () => Promise<number> }
  | {
      command: 'release';
      config: ConnectionConfig;
      key: string;
      force: boolean;
      token: string | undefined;
      run: () => Promise<number>;
    }
  | {
      command: 'history';
      config: ConnectionConfig;
      key: string;
      count: number;
      json: boolean;
      run: () => Promise<number>;
    }
  | { command: 'doctor'; config: ConnectionConfig; ttlMs: number; json: boolean; run: () => Promise<number> }
  | { command: 'completion'; shell: Shell; run: () => Promise<number> }
  | { command: 'complete-keys'; run: () => Promise<number> };

const collect = (value: string, previous: string[] | undefined) => [...(previous ?? []), value];

/**
 * Everything after the key is the command (docs/reference/commands.md): an optional "--", then
 * the command word. A word starting with "-" right after the key is an option in the wrong
 * place, not a command, so it is refused rather than run.
 */
function commandAfterKey(key: string, words: string[]): string[] {
  if (words[0] === '--') return words.slice(1);
  if (words[0]?.startsWith('-')) {
    throw new UsageError(
      `${JSON.stringify(words[0])} comes after the key ${JSON.stringify(key)}: options go before the key, and ` +
        'everything after it is the command (dlock run [options] <key> [--] <command> [args...])',
    );
  }
  return words;
}

/** Commander's own parse errors ("error: unknown option ...") as UsageErrors; help and version pass. */
function asUsageError(error: CommanderError): never {
  if (error.exitCode === 0 || error.code === 'commander.help') throw error;
  throw new UsageError(joinLines(error.message.replace(/^error: /, '').trim()));
}

/** --help's option groups, everyday ones first. */
const GROUP = {
  lock: 'Lock options:',
  waiting: 'Waiting options:',
  command: 'Command options:',
  keeper: 'Keeper options:',
  output: 'Output options:',
  connection: 'Connection options:',
  tls: 'TLS options:',
} as const;

/** The options of the lock itself, which run and acquire share. */
function lockOptions(command: Command): Command {
  return command
    .optionsGroup(GROUP.lock)
    .option('-t, --ttl <duration>', `lease length, renewed every ttl/3 (env DLOCK_TTL; default ${DEFAULTS.ttl})`)
    .option('-x, --exclusive', 'one holder at a time: the default (flock -x; -e also works)')
    .addOption(new Option('-e').hideHelp())
    .on('option:e', () => command.setOptionValue('exclusive', true))
    .option('-s, --shared', 'hold together with other --shared holders, never with an exclusive one (flock -s)')
    .option('--slots <n>', 'up to n holders at once, each with its own slot (DLOCK_SLOT) and fencing token (default 1)')
    .option(
      '--sync-replicas <n>',
      'after acquiring, WAIT (up to --connect-timeout) until n replicas have the lock; else release and exit 69 ' +
        '(default 0)',
    );
}

/** flock's -c and -u, which dlock spells otherwise: a one-line usage error that shows the dlock way. */
function flockHints(command: Command): Command {
  const name = command.name();
  const shell = name === 'run' ? 'dlock runs the command after the key, without a shell' : 'acquire takes no command';
  const hints: Record<string, string> = {
    c: `-c: ${shell}; as flock -c does: dlock run <key> -- sh -c '<command>'`,
    u: '-u: dlock unlocks with its own command: dlock release <key> (owner token from DLOCK_TOKEN or --token)',
  };
  command.addOption(new Option('-c [command]').hideHelp()).addOption(new Option('-u').hideHelp());
  for (const [flag, hint] of Object.entries(hints)) {
    command.on(`option:${flag}`, () => {
      throw new UsageError(hint);
    });
  }
  return command;
}

/** How long to wait for the lock, and what not getting it exits with (run and acquire). */
function waitingOptions(command: Command): Command {
  return command
    .optionsGroup(GROUP.waiting)
    .option('-n, --no-wait', 'fail at once if the lock is held')
    .option('-w, --wait <duration>', 'give up after this long (env DLOCK_WAIT; default: forever)')
    .option('-E, --conflict-exit-code <n>', `exit code when not acquired (default ${DEFAULTS.conflictExitCode})`);
}

/** What --on-lost does, to the command (run) or the watched process (acquire). */
function onLostOption(lossTo: string): Option {
  return new Option(
    '--on-lost <action>',
    `what to do to ${lossTo} if the lock is lost (default ${DEFAULTS.onLost})`,
  ).choices(ON_LOST);
}

/** -q, -v, --log-format and -h, which every command has; `more` adds the command's own output options first. */
function outputOptions(command: Command, more: (command: Command) => Command = (same) => same): Command {
  return more(command.optionsGroup(GROUP.output))
    .option('-q, --quiet', 'print errors only')
    .option('-v, --verbose', 'print one line per lock event')
    .addOption(
      new Option(
        '--log-format <format>',
        `stderr format (env DLOCK_LOG_FORMAT; default ${DEFAULTS.logFormat})`,
      ).choices(LOG_FORMATS),
    )
    .helpOption('-h, --help', 'show help');
}

/** Where Redis is and how to reach it, TLS last. */
function connectionOptions(command: Command): Command {
  return command
    .optionsGroup(GROUP.connection)
    .option(
      '--redis <url>',
      `Redis URL: redis://, rediss://, redis+sentinel://h1,h2/<master>, redis+cluster://h1,h2; repeat for a Redlock ` +
        `quorum (env DLOCK_REDIS_URL, comma-separated; default ${DEFAULTS.redis})`,
      collect,
    )
    .option('--prefix <prefix>', `key namespace (env DLOCK_PREFIX; default ${DEFAULTS.prefix})`)
    .option('--connect-timeout <duration>', `per-instance connect/command timeout (default ${DEFAULTS.connectTimeout})`)
    .optionsGroup(GROUP.tls)
    .option(
      '--tls-ca <file>',
      'PEM CA certificate(s) to trust for rediss:// instead of the system ones (env DLOCK_TLS_CA)',
    )
    .option('--tls-cert <file>', 'PEM client certificate for rediss:// (env DLOCK_TLS_CERT; needs --tls-key)')
    .option('--tls-key <file>', 'PEM private key of --tls-cert (env DLOCK_TLS_KEY)');
}

/** A JSON output option in the Output group. */
const jsonOption = (command: Command) => command.option('--json', 'print JSON');

/**
 * argv + env -> the Invocation, without running anything. Throws a UsageError for bad input and
 * commander's CommanderError when it printed help or the version (exit code 0, or 1 for help
 * shown because nothing was asked).
 */
/**
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
  program.parse(argv, { from: 'user' });
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
  /** The command's own options over dlock's (-q/-v before the command). */
  const withGlobals = <T extends RawOptions>(options: T): T => ({ ...program.opts<RawOptions>(), ...options });

  const waitChoice = (command: Command) => {
    const given = { wait: false, noWait: false };
    command.on('option:wait', () => (given.wait = true)).on('option:no-wait', () => (given.noWait = true));
    return (options: RawOptions): RawOptions => {
      if (given.wait && given.noWait) throw new UsageError('--wait and --no-wait: choose one');
      return { ...options, wait: given.noWait ? false : options.wait };
    };
  };

  const run = program
    .command('run')
    .summary('run a command while holding <key>')
    .description("acquire <key>, run the command while renewing the lock, release it; exit with the command's status")
    .usage('[options] <key> -- <command> [args...]')
    .argument('<key>', 'lock name')
    .argument('[command...]', 'the command and its arguments: everything after the key (the -- is optional)')
    .passThroughOptions();
  lockOptions(run).option(
    '--once-per <duration>',
    "after an exit 0, the key is done until that run's start + duration (server time): every --once-per run " +
      'until then exits with the conflict code (crontabs on several hosts)',
  );
  waitingOptions(run)
    .optionsGroup(GROUP.command)
    .addOption(onLostOption('the command'))
    .option(
      '--kill-after <duration>',
      `grace between SIGTERM and SIGKILL, at most ttl/3 (default ${DEFAULTS.killAfter})`,
    )
    .option('--no-cmd-metadata', 'do not store the command line in the lock (for commands that carry secrets)');
  flockHints(connectionOptions(outputOptions(run))).addHelpText('after', HELP_AFTER.run!);
  const runWait = waitChoice(run);
  run.action((key: string, words: string[], options: RawOptions) => {
    const raw = runWait(options);
    // `dlock run -- -key -- cmd`: a key starting with "-" comes after a first "--".
    const command = commandAfterKey(key, words);
    const config = runConfig(key, command, withGlobals(raw), env);
    decide({ command: 'run', config, run: async () => (await import('./commands/run.js')).run(config, env) });
  });

  const acquire = program
    .command('acquire')
    .summary('take <key> for the next steps of a shell script or CI job')
    .description(
      'take <key> without a command: print shell export lines (DLOCK_KEY, DLOCK_TOKEN, DLOCK_FENCING_TOKEN, ' +
        'DLOCK_TTL_MS) and leave a keeper that renews it until `dlock release` or until the calling process exits',
    )
    .usage('[options] <key>')
    .argument('<key>', 'lock name');
  waitingOptions(lockOptions(acquire))
    .optionsGroup(GROUP.keeper)
    .option('--pid <pid>', 'the process whose exit releases the lock (default: the caller of dlock, e.g. the shell)')
    .option(
      '--no-keeper',
      'leave nothing running: the lock lasts --ttl unless `dlock renew` extends it (steps on different machines)',
    )
    .addOption(onLostOption('the watched process (SIGTERM, SIGKILL, or only a warning)'));
  const acquireFormat = (command: Command) =>
    command
      .option('--json', 'print one JSON object on stdout instead of export lines for eval')
      .addOption(
        new Option('--format <format>', 'the older spelling: sh (the default) or json, as --json').choices(
          ACQUIRE_FORMATS,
        ),
      );
  flockHints(connectionOptions(outputOptions(acquire, acquireFormat))).addHelpText('after', HELP_AFTER.acquire!);
  const acquireWait = waitChoice(acquire);
  acquire.action((key: string, options: RawOptions) => {
    const config = acquireConfig(key, withGlobals(acquireWait(options)), env);
    decide({
      command: 'acquire',
      config,
      run: async () => (await import('./commands/acquire.js')).acquire(config, argv),
    });
  });

  // The keeper `dlock acquire` starts (keeper/keeper.ts): not for users, not in --help.
  program.command(KEEPER_COMMAND, { hidden: true }).action(() => {
    const request = keeperRequest(env);
    const inner = parseArgs(request.argv, env);
    if (inner.command !== 'acquire') throw new Error(`${KEEPER_COMMAND}: not an acquire command line`);
    const config = {
      ...inner.config,
      watchPid: request.watchPid,
      holderCmd: `dlock acquire (keeper for pid ${request.watchPid})`,
    };
    decide({ command: 'keeper', config, run: async () => (await import('./keeper/keeper.js')).keep(config, request) });
  });

  const renew = program
    .command('renew')
    .summary("extend <key>'s lease by its TTL")
    .description("extend <key>'s lease by its TTL; owner-checked: the token must be the holder's")
    .argument('<key>', 'lock name')
    .option('--token <token>', 'the owner token (default: DLOCK_TOKEN, when DLOCK_KEY names <key>)');
  connectionOptions(outputOptions(renew))
    .addHelpText('after', HELP_AFTER.renew!)
    .action((key: string, options: RawOptions) => {
      const config = connectionConfig(withGlobals(options), env);
      const validKey = validateKey(key);
      const token = ownerToken(validKey, options, env);
      if (!token)
        throw new UsageError(
          `renew needs the owner token: --token, or DLOCK_TOKEN with DLOCK_KEY=${validKey} (as dlock acquire ` +
            'exports them)',
        );
      decide({
        command: 'renew',
        config,
        key: validKey,
        token,
        run: async () => (await import('./commands/renew.js')).renew(config, validKey, token),
      });
    });

  const status = program
    .command('status')
    .summary('show who holds <key>, or list held locks')
    .description('show who holds <key> and who waits in line; without a key, list held locks')
    .argument('[key]', 'lock name');
  connectionOptions(outputOptions(status, jsonOption))
    .addHelpText('after', HELP_AFTER.status!)
    .action((key: string | undefined, options: RawOptions & { json?: boolean }) => {
      const config = connectionConfig(withGlobals(options), env);
      const validKey = key === undefined ? undefined : validateKey(key);
      const json = Boolean(options.json);
      decide({
        command: 'status',
        config,
        key: validKey,
        json,
        run: async () => (await import('./commands/status.js')).status(config, validKey, { json }),
      });
    });

  const release = program
    .command('release')
    .summary("release your lock, or with --force anyone's")
    .description(
      'release your own lock (owner token from --token or DLOCK_TOKEN) and stop its keeper; with --force, take ' +
        'it from whoever holds it and print whom it removed',
    )
    .argument('<key>', 'lock name')
    .option('--token <token>', 'the owner token (default: DLOCK_TOKEN, when DLOCK_KEY names <key>)')
    .option(
      '-f, --force',
      'really take the lock from whoever holds it; it stays closed to new holders until that lease runs out',
    )
    .option('--now', 'with --force: open the lock to new holders at once (the removed command may still be running)')
    .option('--slot <n>', 'with --force: remove only the holder of this slot of a --slots lock');
  connectionOptions(outputOptions(release))
    .addHelpText('after', HELP_AFTER.release!)
    .action((key: string, options: RawOptions & { force?: boolean; now?: boolean; slot?: string }) => {
      const config = connectionConfig(withGlobals(options), env);
      const validKey = validateKey(key);
      const force = Boolean(options.force);
      const now = Boolean(options.now);
      if (force && options.token !== undefined)
        throw new UsageError('--force and --token: choose one (--force releases whoever holds it)');
      if (now && !force) throw new UsageError('--now needs --force');
      if (options.slot !== undefined && !force)
        throw new UsageError('--slot needs --force (your own release knows its slot)');
      const slot = options.slot === undefined ? undefined : slotNumber(options.slot);
      const token = force ? undefined : ownerToken(validKey, options, env);
      if (!force && !token) {
        throw new UsageError(
          `release needs the owner token: --token, or DLOCK_TOKEN with DLOCK_KEY=${validKey} (as dlock acquire ` +
            `exports them); to take a lock from whoever holds it, run: dlock release --force ${validKey}`,
        );
      }
      decide({
        command: 'release',
        config,
        key: validKey,
        force,
        token,
        run: async () => (await import('./commands/release.js')).release(config, validKey, { force, now, token, slot }),
      });
    });

  const history = program
    .command('history')
    .summary("show <key>'s recent events")
    .description(
      "<key>'s recent events, newest first: acquired, released (exit status), lost, forced, turned away (busy, " +
        'done)',
    )
    .argument('<key>', 'lock name')
    .option('--count <n>', `how many entries, newest first (default 20, at most ${HISTORY_MAX})`)
    // History's count was -n before; -n now means --no-wait wherever it is accepted.
    .addOption(new Option('-n [count]').hideHelp())
    .on('option:n', () => {
      throw new UsageError('-n: the number of entries is --count <n> (-n is --no-wait in run and acquire)');
    });
  connectionOptions(outputOptions(history, jsonOption))
    .addHelpText('after', HELP_AFTER.history!)
    .action((key: string, options: RawOptions & { json?: boolean; count?: string }) => {
      const config = connectionConfig(withGlobals(options), env);
      const validKey = validateKey(key);
      const count = historyCount(options.count);
      historyConfig(config);
      const json = Boolean(options.json);
      decide({
        command: 'history',
        config,
        key: validKey,
        count,
        json,
        run: async () => (await import('./commands/history.js')).history(config, validKey, { count, json }),
      });
    });

  const doctor = program
    .command('doctor')
    .summary('check the Redis deployment against what dlock needs')
    .description(
      'check each Redis against what dlock needs (eviction, persistence, replicas, ACL, TLS, version, clock, ' +
        'round trip)',
    )
    .option(
      '-t, --ttl <duration>',
      'the lease length your jobs use: the clock and round-trip limits scale with it ' +
        `(env DLOCK_TTL; default ${DEFAULTS.ttl})`,
    );
  connectionOptions(outputOptions(doctor, jsonOption))
    .addHelpText('after', HELP_AFTER.doctor!)
    .action((options: RawOptions & { json?: boolean }) => {
      const config = connectionConfig(withGlobals(options), env);
      const ttlMs = leaseTtl(options, env);
      const json = Boolean(options.json);
      decide({
        command: 'doctor',
        config,
        ttlMs,
        json,
        run: async () => (await import('./commands/doctor.js')).doctor(config, { json, ttlMs }),
      });
    });

  program
    .command('completion')
    .description('print a shell completion script')
    .addHelpText('after', HELP_AFTER.completion!)
    .addArgument(new Argument('<shell>', 'bash, zsh or fish').choices(['bash', 'zsh', 'fish']))
    .action((shell: Shell) => {
      decide({
        command: 'completion',
        shell,
        run: async () => (await import('./commands/completion.js')).completion(shell),
      });
    });

  // Lock names for the completion scripts (commands/complete-keys.ts): not for users, not in --help.
  program
    .command('__complete-keys', { hidden: true })
    .argument('[prefix]', 'the start of the name', '')
    .action((prefix: string) => {
      const run = async () => (await import('./commands/complete-keys.js')).completeKeysFromEnv(env, prefix);
      decide({ command: 'complete-keys', run });
    });

  // Commander's own help command prints the whole help for an unknown name; this one says so.
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

  return program;
}
