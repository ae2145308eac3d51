// dlock acquire: run's lock options without a command, declared; its rules are in config (acquireConfig).

import { Option, type Command } from 'commander';
import { ACQUIRE_FORMATS, acquireConfig, DEFAULTS, type RawOptions } from '../config/index.js';
import { HELP_AFTER } from './help.js';
import type { CommandLine } from './invocation.js';
import {
  connectionOptions,
  flockHints,
  GROUP,
  jobBoundOptions,
  keyAfterOptions,
  lockOptions,
  monitoringOptions,
  onLostOption,
  signalOption,
  outputOptions,
  waitChoice,
  waitingOptions,
} from './options.js';

/** --json, and --format (its older spelling), in the Output group. */
function acquireFormat(command: Command): Command {
  return command
    .option('--json', 'print one JSON object on stdout instead of export lines for eval')
    .addOption(
      new Option('--format <format>', 'the older spelling: sh (the default) or json, as --json').choices(
        ACQUIRE_FORMATS,
      ),
    );
}

/** `dlock acquire [options] <key>`. */
export function declareAcquire(program: Command, cli: CommandLine): void {
  const acquire = program
    .command('acquire')
    .summary('take <key> for the next steps of a shell script or CI job')
    .description(
      'take <key> without a command: print shell export lines (DLOCK_KEY, DLOCK_TOKEN, DLOCK_FENCING_TOKEN, ' +
        'DLOCK_TTL_MS) and leave a keeper that renews it until `dlock release`, or until the calling process exits ' +
        'and the steps it left in the background are gone',
    )
    .usage('[options] <key>')
    .argument('<key>', 'lock name');
  waitingOptions(lockOptions(acquire))
    .optionsGroup(GROUP.keeper)
    .option(
      '--pid <pid>',
      'the process whose exit (once its background steps are gone) releases the lock (default: the shell that ' +
        'reads the output, else the caller)',
    )
    .option(
      '--no-keeper',
      'leave nothing running: the lock lasts --ttl unless `dlock renew` extends it (steps on different machines)',
    )
    .addOption(onLostOption('the watched process (the --signal, SIGKILL, or only a warning)'))
    .addOption(signalOption('the watched process'));
  jobBoundOptions(
    acquire,
    'the watched process',
    `(the --signal, SIGKILL ${DEFAULTS.killAfter} later, at most ttl/3) and release the lock`,
  );
  flockHints(connectionOptions(outputOptions(monitoringOptions(acquire), acquireFormat))).addHelpText(
    'after',
    HELP_AFTER.acquire!,
  );
  keyAfterOptions(acquire);
  const acquireWait = waitChoice(acquire);
  acquire.action((key: string, options: RawOptions) => {
    const config = acquireConfig(key, cli.withGlobals(acquireWait(options)), cli.env);
    cli.decide({
      command: 'acquire',
      config,
      run: async () => (await import('../commands/acquire.js')).acquire(config, cli.argv, cli.env),
    });
  });
}
