// dlock history: declared; its rules (--count, a backend that keeps history) are in config (historyConfig).

import { Option, type Command } from 'commander';
import { historyConfig, type RawOptions } from '../config/index.js';
import { UsageError } from '../errors.js';
import { HELP_AFTER } from './help.js';
import type { CommandLine } from './invocation.js';
import { connectionOptions, keyAfterOptions, jsonOption, outputOptions } from './options.js';
import { HISTORY_MAX } from '../backend/index.js';

/** `dlock history [options] <key>`. */
export function declareHistory(program: Command, cli: CommandLine): void {
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
  keyAfterOptions(history);
  connectionOptions(outputOptions(history, jsonOption))
    .addHelpText('after', HELP_AFTER.history!)
    .action((key: string, options: RawOptions) => {
      const showing = historyConfig(key, cli.withGlobals(options), cli.env);
      const { config, key: validKey, count, json } = showing;
      const run = async () => (await import('../commands/history.js')).history(config, validKey, { count, json });
      cli.decide({ command: 'history', ...showing, run });
    });
}
