// The hidden command `dlock acquire` starts its keeper with (keeper/keeper.ts): not for users, not in --help.

import type { Command } from 'commander';
import { KEEPER_COMMAND, keeperRequest } from '../keeper/protocol.js';
import type { CommandLine } from './invocation.js';

/** The keeper parses its acquire's command line again, and watches the pid the request names. */
export function declareKeeper(program: Command, cli: CommandLine): void {
  program.command(KEEPER_COMMAND, { hidden: true }).action(() => {
    const request = keeperRequest(cli.env);
    const inner = cli.parse(request.argv);
    if (inner.command !== 'acquire') throw new Error(`${KEEPER_COMMAND}: not an acquire command line`);
    const config = {
      ...inner.config,
      watchPid: request.watchPid,
      holderCmd: `dlock acquire (keeper for pid ${request.watchPid})`,
    };
    const run = async () => (await import('../keeper/keeper.js')).keep(config, request);
    cli.decide({ command: 'keeper', config, run });
  });
}
