// The one top-level catch: every failure becomes one "dlock: " line (or one JSON event with
// --log-format json) and an exit code; dlock exits only once its output has drained.

import { CommanderError } from 'commander';
import { parseArgs } from './cli/program.js';
import type { LogFormat } from './config/index.js';
import { DlockError, EXIT } from './errors.js';
import { finishEventSinks, Logger, tellEventSinks } from './log.js';
import { flushStdio, stderr, stdout, writeStdoutNow } from './output.js';
import { hideSecretsFromPs } from './process-title.js';
import { maskSecrets } from './secrets.js';
import { acquireForEval, failureLine } from './keeper/fail-closed.js';
import { printable } from './untrusted.js';
import { startupOver } from './jit.js';

const JOB_COMMANDS = new Set(['run', 'acquire', 'keeper', 'renew', 'release', 'heartbeat']);

export async function main(argv: string[] = process.argv.slice(2), env = process.env): Promise<number> {
  hideSecretsFromPs(argv);
  // Known once parsing has decided; -v inside the command's own arguments is the command's.
  let verbose = false;
  // Errors are JSON events once json is known to be the format: from DLOCK_LOG_FORMAT, or from
  // --log-format as soon as commander has parsed it. A usage error found before that is text.
  const reporting: { format: LogFormat } = { format: env.DLOCK_LOG_FORMAT === 'json' ? 'json' : 'text' };
  const log = () => new Logger(verbose ? 'verbose' : 'normal', reporting.format);
  // stderr is one "dlock: " line per problem: Node's own warnings (e.g. about
  // NODE_TLS_REJECT_UNAUTHORIZED, which dlock does not honour anyway) would be a second voice.
  process.removeAllListeners('warning');
  // An acquire's stdout is eval'd: on any failure it carries a line that makes eval fail too.
  let forEval = acquireForEval(argv);
  let code: number;
  try {
    const output = { writeOut: (text: string) => stdout.write(text), writeErr: (text: string) => stderr.write(text) };
    const invocation = parseArgs(argv, env, output, (format) => (reporting.format = format));
    if ('config' in invocation) {
      verbose = invocation.config.verbosity === 'verbose';
      reporting.format = invocation.config.logFormat;
    }
    forEval = invocation.command === 'acquire' && invocation.config.format === 'sh';
    // A job's own commands keep the binary's start-up JIT policy (src/jit.ts) until their command or
    // section runs (run, the keeper) or they exit; status, history, doctor, metrics and the rest may
    // loop over many locks.
    if (!JOB_COMMANDS.has(invocation.command)) startupOver();
    code = await invocation.run();
  } catch (error) {
    code = report(error, log(), verbose);
  }
  // --ping's last ping and --on-event's hooks, each within its bound (nothing without them).
  await finishEventSinks(code);
  // Written now: the executable could exit before a stream write to the pipe had left it.
  if (forEval && code !== 0) writeStdoutNow(failureLine(code));
  return code;
}

function report(error: unknown, log: Logger, verbose: boolean): number {
  if (error instanceof CommanderError) {
    // Help and version exit 0; help shown because nothing was asked is a usage error. Both printed already.
    return error.exitCode === 0 ? 0 : EXIT.usage;
  }
  if (error instanceof DlockError) {
    const fields = { event: error.event, exit_code: error.exitCode, ...error.fields };
    // A silent error (busy with -E 0) is still an event for --ping-busy and --on-event.
    if (error.silent) tellEventSinks({ ...fields, message: error.message });
    else log.error(error.message, fields);
    return error.exitCode;
  }
  // An internal error may quote an argument too: masked as every DlockError's message is.
  const message = maskSecrets(error instanceof Error ? error.message : String(error));
  const stack = verbose && error instanceof Error && error.stack ? maskSecrets(error.stack) : undefined;
  if (log.format === 'json') {
    log.error(`internal error: ${message.split('\n')[0]} (a bug: please report it)`, {
      exit_code: EXIT.internal,
      ...(stack ? { stack } : {}),
    });
  } else {
    log.error(
      `internal error: ${message.split('\n')[0]} (a bug: please report ` +
        `it${verbose ? '' : '; --verbose shows the stack'})`,
      { exit_code: EXIT.internal },
    );
    if (stack) stderr.write(`${stack.split('\n').map(printable).join('\n')}\n`);
  }
  return EXIT.internal;
}

/**
 * Exit once stdout and stderr have drained (a pipe reader gets every byte), and without
 * waiting for anything else: a Redis client or timer left behind cannot keep dlock alive.
 */
async function exit(code: number): Promise<never> {
  process.exitCode = code;
  await flushStdio();
  process.exit(code);
}

main().then(exit, () => exit(EXIT.internal));
