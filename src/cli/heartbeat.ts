// dlock heartbeat: declared for --help, the man page and completions; a plain `dlock heartbeat
// [key]` never reaches commander (src/entry.ts answers it first), this answers the same.

import type { Command } from 'commander';
import { HELP_AFTER } from './help.js';
import type { CommandLine } from './invocation.js';

/** `dlock heartbeat [key]`. */
export function declareHeartbeat(program: Command, cli: CommandLine): void {
  program
    .command('heartbeat')
    .summary('tell the dlock this job runs under that it makes progress (--heartbeat)')
    .description(
      'prove progress to the dlock this process runs under (dlock run --heartbeat, or dlock acquire --heartbeat ' +
        'and its keeper): touches the file DLOCK_HEARTBEAT_FILE names and those DLOCK_HEARTBEAT_ENCLOSING lists ' +
        '(the enclosing dlocks that watch one); no Redis round trip',
    )
    .argument('[key]', 'the lock the heartbeat is for (default: DLOCK_KEY); another key exits 76')
    .helpOption('-h, --help', 'show help')
    .addHelpText('after', HELP_AFTER.heartbeat!)
    .action((key: string | undefined) => {
      const run = async () => (await import('../commands/heartbeat.js')).heartbeat(key, cli.env);
      cli.decide({ command: 'heartbeat', run });
    });
}
