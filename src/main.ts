// The one top-level catch: every failure becomes one "dlock: " line and an exit code.

import { CommanderError } from 'commander';
import { buildProgram, type Invocation } from './cli.js';
import { DlockError, EXIT } from './errors.js';
import { hideSecretsFromPs } from './process-title.js';
import { redactUrlsIn } from './redis/url.js';

export async function main(argv: string[] = process.argv.slice(2), env = process.env): Promise<number> {
  hideSecretsFromPs(argv);
  const verbose = argv.includes('-v') || argv.includes('--verbose');
  // stderr is one "dlock: " line per problem: Node's own warnings (e.g. about
  // NODE_TLS_REJECT_UNAUTHORIZED, which dlock does not honour anyway) would be a second voice.
  process.removeAllListeners('warning');
  try {
    const decision: { invocation: Invocation } = { invocation: { exitCode: 0 } };
    const program = buildProgram(env, (decided) => (decision.invocation = decided))
      .exitOverride()
      .configureOutput({ outputError: (text, write) => write(`dlock: ${redactUrlsIn(text.replace(/^error: /, '').trim().replace(/\s*\n\s*/g, ' '))}\n`) });
    for (const command of program.commands) command.exitOverride().configureOutput(program.configureOutput());
    if (argv.length === 0) {
      program.outputHelp({ error: true });
      return EXIT.usage;
    }
    await program.parseAsync(argv, { from: 'user' });
    const { invocation } = decision;
    return 'run' in invocation ? await invocation.run() : invocation.exitCode;
  } catch (error) {
    return report(error, verbose);
  }
}

function report(error: unknown, verbose: boolean): number {
  if (error instanceof CommanderError) {
    // help and version exit 0 and have printed already; parse errors printed their line.
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
