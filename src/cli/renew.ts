// dlock renew: declared; the owner-token rule is in config (renewConfig).

import type { Command } from 'commander';
import { renewConfig, type RawOptions } from '../config/index.js';
import { HELP_AFTER } from './help.js';
import type { CommandLine } from './invocation.js';
import { connectionOptions, keyAfterOptions, outputOptions } from './options.js';

/** `dlock renew [options] <key>`. */
export function declareRenew(program: Command, cli: CommandLine): void {
  const renew = program
    .command('renew')
    .summary("extend <key>'s lease by its TTL")
    .description("extend <key>'s lease by its TTL; owner-checked: the token must be the holder's")
    .argument('<key>', 'lock name')
    .option(
      '--token <token>',
      "the owner token (default: DLOCK_TOKEN when DLOCK_KEY names <key>, else <key>'s entry in DLOCK_HELD)",
    );
  keyAfterOptions(renew);
  connectionOptions(outputOptions(renew))
    .addHelpText('after', HELP_AFTER.renew!)
    .action((key: string, options: RawOptions) => {
      const renewing = renewConfig(key, cli.withGlobals(options), cli.env);
      const { config, key: validKey, token } = renewing;
      const run = async () => (await import('../commands/renew.js')).renew(config, validKey, token);
      cli.decide({ command: 'renew', ...renewing, run });
    });
}
