// The option groups several commands share (lock, waiting, output, connection, TLS), in --help's order.

import { Command, Option } from 'commander';
import { DEFAULTS, LOG_FORMATS, ON_LOST, PING_TIMEOUT_DEFAULT, type RawOptions } from '../config/index.js';
import { UsageError } from '../errors.js';
import { KINDS, MODES, PRIORITY_MAX } from '../backend/index.js';

/** --redis repeats: each value is added to the list. */
const collect = (value: string, previous: string[] | undefined) => [...(previous ?? []), value];

/** --help's option groups, everyday ones first. */
export const GROUP = {
  lock: 'Lock options:',
  waiting: 'Waiting options:',
  command: 'Command options:',
  keeper: 'Keeper options:',
  monitoring: 'Monitoring options:',
  output: 'Output options:',
  connection: 'Connection options:',
  tls: 'TLS options:',
} as const;

/** The options of the lock itself, which run and acquire share. */
export function lockOptions(command: Command): Command {
  command
    .optionsGroup(GROUP.lock)
    .option('-t, --ttl <duration>', `lease length, renewed every ttl/3 (env DLOCK_TTL; default ${DEFAULTS.ttl})`);
  // The holder kinds' options, as MODES declares them and in its order (-x, -s, --slots n).
  for (const kind of KINDS) {
    const { short, argument, help } = MODES[kind].flag;
    command.option([short, [`--${kind}`, argument].filter(Boolean).join(' ')].filter(Boolean).join(', '), help);
  }
  return command
    .addOption(new Option('-e').hideHelp())
    .on('option:e', () => command.setOptionValue('exclusive', true))
    .option(
      '--reason <text>',
      'why it is held, shown by status, the busy line and the history (one line, at most 512 characters; env ' +
        'DLOCK_REASON)',
    )
    .option(
      '--sync-replicas <n>',
      'after acquiring, WAIT (up to --connect-timeout) until n replicas have the lock; else release and exit 69 ' +
        '(default 0)',
    );
}

/** flock's -c and -u, which dlock spells otherwise: a one-line usage error that shows the dlock way. */
export function flockHints(command: Command): Command {
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
export function waitingOptions(command: Command): Command {
  return command
    .optionsGroup(GROUP.waiting)
    .option('-n, --no-wait', 'fail at once if the lock is held')
    .option('-w, --wait <duration>', 'give up after this long (env DLOCK_WAIT; default: forever)')
    .option('-E, --conflict-exit-code <n>', `exit code when not acquired (default ${DEFAULTS.conflictExitCode})`)
    .option(
      '--priority <n>',
      `in line, higher enters first, arrival order among equals (-${PRIORITY_MAX} to ${PRIORITY_MAX}, default 0)`,
    )
    .option(
      '--supersede',
      'in line, take the place of every older --supersede waiter of the key: they exit with the conflict code; ' +
        'the holder is never touched (not with -n)',
    );
}

/** --ping and --on-event (run and acquire): who is told about the lock, within what bound; run: --ping-output. */
export function monitoringOptions(command: Command): Command {
  command
    .optionsGroup(GROUP.monitoring)
    .option(
      '--ping <url>',
      'healthchecks-style monitor: <url>/start once held, <url> on exit 0, <url>/<exit status> otherwise, ' +
        "each with the run's id in ?rid= (env DLOCK_PING_URL)",
    )
    .option(
      '--ping-busy',
      'a run turned away (busy, done this window, superseded) pings <url>/log; by default it sends nothing',
    )
    .option(
      '--ping-timeout <duration>',
      `how long a ping (retries included), or at exit an --on-event hook, may hold dlock up (env ` +
        `DLOCK_PING_TIMEOUT; default ${PING_TIMEOUT_DEFAULT}, at most 30s)`,
    )
    .option(
      '--on-event <command>',
      'run this /bin/sh command for each lock event, in order, beside the lock: DLOCK_EVENT and ' +
        'DLOCK_EVENT_<FIELD> in its environment, the JSON event on stdin (env DLOCK_ON_EVENT)',
    );
  if (command.name() !== 'run') return command;
  return command.option(
    '--ping-output <size>',
    "send the last <size> bytes (10k: 10000, at most 100k) of the command's stdout and stderr as the final " +
      "ping's body; they then pass through dlock (pipes)",
  );
}

/** --signal (run, acquire): what stops `job` for a lost lock and the bounds, as timeout(1)'s -s chooses it. */
export function signalOption(job: string): Option {
  return new Option(
    '--signal <signal>',
    `the signal that stops ${job} for --on-lost term, --max-hold and --heartbeat: a name (TERM, SIGINT) or ` +
      'number (default TERM; SIGKILL still follows after the grace)',
  );
}

/** What --on-lost does, to the command (run) or the watched process (acquire). */
export function onLostOption(lossTo: string): Option {
  return new Option(
    '--on-lost <action>',
    `what to do to ${lossTo} if the lock is lost (default ${DEFAULTS.onLost})`,
  ).choices(ON_LOST);
}

/**
 * --max-hold and --heartbeat: how long the job may hold the lock, or go without a `dlock heartbeat`.
 * `stop`: how `job` is stopped and what follows (run exits 124; an acquire's shell has its own status).
 */
export function jobBoundOptions(command: Command, job: string, stop: string): Command {
  return command
    .option('--max-hold <duration>', `once the lock has been held this long, stop ${job} ${stop} (env DLOCK_MAX_HOLD)`)
    .option(
      '--heartbeat <duration>',
      `stop ${job} the same way when it goes this long (at least 100ms) without running \`dlock heartbeat\` ` +
        '(env DLOCK_HEARTBEAT); the job gets this interval in DLOCK_HEARTBEAT_MS',
    );
}

/** -q, -v, --log-format and -h, which every command has; `more` adds the command's own output options first. */
export function outputOptions(command: Command, more: (command: Command) => Command = (same) => same): Command {
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

/** Where the store (Redis or etcd) is and how to reach it, TLS last. */
export function connectionOptions(command: Command): Command {
  return command
    .optionsGroup(GROUP.connection)
    .option(
      '--redis <url>',
      `store URL, whose scheme picks the store: redis://, rediss://, redis+sentinel://h1,h2/<master>, ` +
        `redis+cluster://h1,h2 (repeat for a Redlock quorum), or etcd://h1:2379,h2:2379, etcds:// (one etcd cluster) ` +
        `(env DLOCK_REDIS_URL, comma-separated; default ${DEFAULTS.redis})`,
      collect,
    )
    .option('--prefix <prefix>', `key namespace (env DLOCK_PREFIX; default ${DEFAULTS.prefix})`)
    .option('--connect-timeout <duration>', `per-instance connect/command timeout (default ${DEFAULTS.connectTimeout})`)
    .optionsGroup(GROUP.tls)
    .option(
      '--tls-ca <file>',
      'PEM CA certificate(s) to trust for rediss:// and etcds:// instead of the system ones (env DLOCK_TLS_CA)',
    )
    .option(
      '--tls-cert <file>',
      'PEM client certificate for rediss:// and etcds:// (env DLOCK_TLS_CERT; needs --tls-key)',
    )
    .option('--tls-key <file>', 'PEM private key of --tls-cert (env DLOCK_TLS_KEY)');
}

/** A JSON output option in the Output group. */
export const jsonOption = (command: Command) => command.option('--json', 'print JSON');

/**
 * A command with a required <key> checks it after its options (src/config/): in `acquire -w k`,
 * -w took "k" and no key is left, and the mistake to name is the --wait "k". Commander would
 * refuse the missing key before the action sees the options; the action's config does it instead
 * (validateKey, with commander's words). Help, the man page and completions still show <key>.
 */
export function keyAfterOptions(command: Command): Command {
  // Commander 14 calls missingArgument(name) for a required argument not given (a method, not an option).
  (command as unknown as { missingArgument: (name: string) => void }).missingArgument = () => {};
  return command;
}

/** --wait and --no-wait share one value in commander: which were given, and one of them at most. */
export function waitChoice(command: Command): (options: RawOptions) => RawOptions {
  const given = { wait: false, noWait: false };
  command.on('option:wait', () => (given.wait = true)).on('option:no-wait', () => (given.noWait = true));
  return (options: RawOptions): RawOptions => {
    if (given.wait && given.noWait) throw new UsageError('--wait and --no-wait: choose one');
    return { ...options, wait: given.noWait ? false : options.wait };
  };
}
