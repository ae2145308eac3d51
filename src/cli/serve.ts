// dlock serve: declared; its rules (a loopback --listen by default) are in config (serveConfig).

import type { Command } from 'commander';
import { SERVE_PORT, serveConfig, type RawOptions } from '../config/index.js';
import { HELP_AFTER } from './help.js';
import type { CommandLine } from './invocation.js';
import { connectionOptions, outputOptions } from './options.js';

/** `dlock serve [options] [key...]`. */
export function declareServe(program: Command, cli: CommandLine): void {
  const serve = program
    .command('serve')
    .summary('a read-only web board of the locks under the prefix')
    .description(
      'serve a read-only board of every lock under the prefix until SIGTERM or SIGINT: / (a page that refreshes ' +
        'itself), /lock/<name>, /api/locks[/<name>] (as status --json) and /metrics (as dlock metrics)',
    )
    .argument('[key...]', 'lock names to show even when nobody holds them (their done mark and last events)')
    .option(
      '--listen <addr:port>',
      `where to listen; a port alone listens on 127.0.0.1 only (default 127.0.0.1:${SERVE_PORT}); the board has ` +
        'no authentication: keep it on loopback or behind a proxy that has',
    );
  connectionOptions(outputOptions(serve))
    .addHelpText('after', HELP_AFTER.serve!)
    .action((keys: string[], options: RawOptions) => {
      const serving = serveConfig(keys, cli.withGlobals(options), cli.env);
      const run = async () => (await import('../commands/serve.js')).serve(serving);
      cli.decide({ command: 'serve', ...serving, run });
    });
}
