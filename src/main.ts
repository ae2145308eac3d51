// The one top-level catch: every failure becomes one "dlock: " line and an exit code.

import { CommanderError } from 'commander';
import { parseArgs } from './cli.js';
import { DlockError, EXIT } from './errors.js';
import { hideSecretsFromPs } from './process-title.js';

export async function main(argv: string[] = process.argv.slice(2), env = process.env): Promise<number> {
  hideSecretsFromPs(argv);
  // Known once parsing has decided; -v inside the command's own arguments is the command's.
  let verbose = false;
  // stderr is one "dlock: " line per problem: Node's own warnings (e.g. about
  // NODE_TLS_REJECT_UNAUTHORIZED, which dlock does not honour anyway) would be a second voice.
  process.removeAllListeners('warning');
  try {
    const invocation = parseArgs(argv, env);
    verbose = 'config' in invocation && invocation.config.verbosity === 'verbose';
    return await invocation.run();
  } catch (error) {
    return report(error, verbose);
  }
}

function report(error: unknown, verbose: boolean): number {
  if (error instanceof CommanderError) {
    // Help and version exit 0; help shown because nothing was asked is a usage error. Both printed already.
    return error.exitCode === 0 ? 0 : EXIT.usage;
  }
  if (error instanceof DlockError) {
    if (!error.silent) process.stderr.write(`dlock: ${error.message}\n`);
    return error.exitCode;
  }
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`dlock: internal error: ${message.split('\n')[0]} (a bug: please report it${verbose ? '' : '; --verbose shows the stack'})\n`);
  if (verbose && error instanceof Error && error.stack) process.stderr.write(`${error.stack}\n`);
  return EXIT.internal;
}

main().then(
  (code) => process.exit(code),
  () => process.exit(EXIT.internal),
);
