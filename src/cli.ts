// The command line: declares and normalises options, then calls a plain command function.
// Nothing here talks to Redis; commands are imported only when they run.

import { Argument, Command, Option } from 'commander';
import { connectionConfig, DEFAULTS, LOG_FORMATS, ON_LOST, runConfig, validateKey, type Env, type RawOptions } from './config.js';
import { UsageError } from './errors.js';

declare const __DLOCK_VERSION__: string | undefined;
export const VERSION = typeof __DLOCK_VERSION__ === 'string' ? __DLOCK_VERSION__ : '0.0.0-dev';

/** What the CLI decided to do: a command and its validated options, or nothing (help, version). */
export type Invocation = { exitCode: number } | { run: () => Promise<number> };

const collect = (value: string, previous: string[] | undefined) => [...(previous ?? []), value];

const RUN_EXAMPLES = `
Examples:
  # crontab: skip quietly when another host is still running it
  */5 * * * * dlock run -n -E 0 nightly-sync -- /opt/jobs/sync.sh

  # CI mutex: wait up to 10 minutes for the previous deploy
  dlock run --wait 10m deploy-prod -- make deploy

  # nested use: a script that holds the lock may call dlock on it again
  dlock run db-migrate -- sh -c 'dlock run db-migrate -- ./migrate.sh'

  # pass the fencing token to the resource, which rejects older tokens
  dlock run billing -- sh -c 'curl -H "Fence: $DLOCK_FENCING_TOKEN" https://...'

  # through Redis Sentinel, following failovers
  dlock run --redis redis+sentinel://s1:26379,s2:26379,s3:26379/mymaster job -- ./job.sh

  # Redlock across three independent Redis servers
  dlock run --redis redis://a:6379 --redis redis://b:6379 --redis redis://c:6379 job -- ./job.sh
`;

function connectionOptions(command: Command): Command {
  return command
    .option('--redis <url>', `Redis URL: redis://, rediss://, redis+sentinel://h1,h2/<master>, redis+cluster://h1,h2; repeat for a Redlock quorum (env DLOCK_REDIS_URL, comma-separated; default ${DEFAULTS.redis})`, collect)
    .option('--prefix <prefix>', `key namespace (env DLOCK_PREFIX; default ${DEFAULTS.prefix})`)
    .option('--connect-timeout <duration>', `per-instance connect/command timeout (default ${DEFAULTS.connectTimeout})`)
    .option('--tls-ca <file>', 'PEM CA certificate(s) to trust for rediss:// instead of the system ones (env DLOCK_TLS_CA)')
    .option('--tls-cert <file>', 'PEM client certificate for rediss:// (env DLOCK_TLS_CERT; needs --tls-key)')
    .option('--tls-key <file>', 'PEM private key of --tls-cert (env DLOCK_TLS_KEY)')
    .option('-q, --quiet', 'print errors only')
    .option('-v, --verbose', 'print one line per lock event')
    .addOption(new Option('--log-format <format>', `stderr format (env DLOCK_LOG_FORMAT; default ${DEFAULTS.logFormat})`).choices(LOG_FORMATS));
}

export function buildProgram(env: Env, decide: (invocation: Invocation) => void): Command {
  const program = new Command('dlock')
    .description('flock(1) for distributed systems: run a command while holding a Redis lock')
    .version(VERSION, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .addHelpCommand('help [command]', 'show help for a command')
    .showSuggestionAfterError(true)
    .addHelpText('after', RUN_EXAMPLES);

  let waitGiven = false;
  let noWaitGiven = false;
  connectionOptions(
    program
      .command('run')
      .description('acquire <key>, run the command while renewing the lock, release it; exit with the command\'s status')
      .usage('[options] <key> -- <command> [args...]')
      .argument('<key>', 'lock name')
      .argument('[command...]', 'the command and its arguments, after --'),
  )
    .option('-t, --ttl <duration>', `lease length, renewed every ttl/3 (env DLOCK_TTL; default ${DEFAULTS.ttl})`)
    .option('-n, --no-wait', 'fail at once if the lock is held')
    .option('-w, --wait <duration>', 'give up after this long (env DLOCK_WAIT; default: forever)')
    .option('-E, --conflict-exit-code <n>', `exit code when not acquired (default ${DEFAULTS.conflictExitCode})`)
    .addOption(new Option('--on-lost <action>', `what to do to the command if the lock is lost (default ${DEFAULTS.onLost})`).choices(ON_LOST))
    .option('--kill-after <duration>', `grace between SIGTERM and SIGKILL, at most ttl/3 (default ${DEFAULTS.killAfter})`)
    .option('--sync-replicas <n>', 'after acquiring, WAIT (up to --connect-timeout) until n replicas have the lock; else release and exit 69 (default 0)')
    .option('--no-cmd-metadata', 'do not store the command line in the lock (for commands that carry secrets)')
    .addHelpText('after', RUN_EXAMPLES)
    .on('option:wait', () => (waitGiven = true))
    .on('option:no-wait', () => (noWaitGiven = true))
    .action((key: string, command: string[], options: RawOptions) => {
      if (waitGiven && noWaitGiven) throw new UsageError('--wait and --no-wait: choose one');
      // `dlock run -- -key -- cmd`: a key starting with "-" comes after a first "--".
      const argv = command[0] === '--' ? command.slice(1) : command;
      const config = runConfig(key, argv, { ...options, wait: noWaitGiven ? false : options.wait }, env);
      decide({ run: async () => (await import('./commands/run.js')).run(config, env) });
    });

  connectionOptions(
    program
      .command('status')
      .description('show who holds <key> (exit 0 held, 1 free); without a key, list held locks')
      .argument('[key]', 'lock name'),
  )
    .option('--json', 'print JSON')
    .action((key: string | undefined, options: RawOptions & { json?: boolean }) => {
      const config = connectionConfig(options, env);
      const validKey = key === undefined ? undefined : validateKey(key);
      decide({ run: async () => (await import('./commands/status.js')).status(config, validKey, { json: Boolean(options.json) }) });
    });

  connectionOptions(
    program
      .command('release')
      .description('break a lock held by someone else and print whom it removed (needs --force)')
      .argument('<key>', 'lock name'),
  )
    .option('--force', 'really take the lock from whoever holds it; it stays closed to new holders until that lease runs out')
    .option('--now', 'with --force: open the lock to new holders at once (the removed command may still be running)')
    .action((key: string, options: RawOptions & { force?: boolean; now?: boolean }) => {
      const config = connectionConfig(options, env);
      const validKey = validateKey(key);
      decide({ run: async () => (await import('./commands/release.js')).release(config, validKey, { force: Boolean(options.force), now: Boolean(options.now) }) });
    });

  program
    .command('completion')
    .description('print a shell completion script')
    .addArgument(new Argument('<shell>', 'bash, zsh or fish').choices(['bash', 'zsh', 'fish']))
    .action((shell: 'bash' | 'zsh' | 'fish') => {
      decide({ run: async () => (await import('./commands/completion.js')).completion(shell) });
    });

  return program;
}
