// dlock status: declared; its rules are in config (statusConfig).

import type { Command } from 'commander';
import { statusConfig, type RawOptions } from '../config/index.js';
import { HELP_AFTER } from './help.js';
import type { CommandLine } from './invocation.js';
import { connectionOptions, jsonOption, outputOptions } from './options.js';

/** `dlock status [options] [key]`. */
export function declareStatus(program: Command, cli: CommandLine): void {
  const status = program
    .command('status')
    .summary('show who holds <key>, or list held locks')
    .description('show who holds <key> and who waits in line; without a key, list held locks')
    .argument('[key]', 'lock name');
  connectionOptions(outputOptions(status, jsonOption))
    .addHelpText('after', HELP_AFTER.status!)
    .action((key: string | undefined, options: RawOptions) => {
      const showing = statusConfig(key, cli.withGlobals(options), cli.env);
      const { config, key: validKey, json } = showing;
      const run = async () => (await import('../commands/status.js')).status(config, validKey, { json });
      cli.decide({ command: 'status', ...showing, run });
    });
}
