// dlock hold and dlock unhold: declared; their rules are in config (holdConfig, unholdConfig).

import type { Command } from 'commander';
import { DEFAULTS, holdConfig, unholdConfig, type RawOptions } from '../config/index.js';
import { HELP_AFTER } from './help.js';
import type { CommandLine } from './invocation.js';
import { connectionOptions, GROUP, keyAfterOptions, outputOptions, waitChoice } from './options.js';

/** `dlock hold [options] <key>`. */
export function declareHold(program: Command, cli: CommandLine): void {
  const hold = program
    .command('hold')
    .summary('hold <key> with no process, with a reason (a deploy freeze)')
    .description(
      'hold <key> with no process behind it: who (user@host), since, until and why are stored and shown by ' +
        'status, the busy line and the history; waits in line like any holder with --wait. It lasts --for, ' +
        'until --until, or until `dlock unhold`',
    )
    .usage('[options] <key>')
    .argument('<key>', 'lock name')
    .option('--reason <text>', 'why it is held (required; one line, at most 512 characters)')
    .option('--for <duration>', 'hold it this long (e.g. 2h)')
    .option('--until <time>', 'hold it until then: HH:MM (the next one, local time) or an ISO 8601 date-time');
  hold
    .optionsGroup(GROUP.waiting)
    .option('-n, --no-wait', 'fail at once if the key is held (the default)')
    .option('-w, --wait <duration>', 'wait in line this long for the turn (DLOCK_WAIT is not read; default: none)')
    .option('-E, --conflict-exit-code <n>', `exit code when not held (default ${DEFAULTS.conflictExitCode})`);
  connectionOptions(outputOptions(hold)).addHelpText('after', HELP_AFTER.hold!);
  keyAfterOptions(hold);
  const holdWait = waitChoice(hold);
  hold.action((key: string, options: RawOptions) => {
    const config = holdConfig(key, cli.withGlobals(holdWait(options)), cli.env);
    cli.decide({ command: 'hold', config, run: async () => (await import('../commands/hold.js')).hold(config) });
  });
}

/** `dlock unhold [options] <key>`. */
export function declareUnhold(program: Command, cli: CommandLine): void {
  const unhold = program
    .command('unhold')
    .summary('end a hold (dlock hold): yours, or with --force anyone’s')
    .description(
      'end the hold on <key> that `dlock hold` took: by the user who took it (on any host), or by another with ' +
        '--force (recorded in the history as taken, with who)',
    )
    .argument('<key>', 'lock name')
    .option('-f, --force', "end another user's hold");
  keyAfterOptions(unhold);
  connectionOptions(outputOptions(unhold))
    .addHelpText('after', HELP_AFTER.unhold!)
    .action((key: string, options: RawOptions) => {
      const unholding = unholdConfig(key, cli.withGlobals(options), cli.env);
      const run = async () => (await import('../commands/unhold.js')).unhold(unholding);
      cli.decide({ command: 'unhold', ...unholding, run });
    });
}
