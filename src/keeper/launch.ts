// The foreground half of `dlock acquire` with a keeper (the other half is ./keeper.ts): start the
// keeper detached, with the request in its environment and a pipe on its descriptor 3; read its
// one report there; once the variables are on stdout, write the ACK on its stdin and leave it
// running. Not held: wait until the keeper has exited, so nothing is left running.

import { spawn } from 'node:child_process';
import { fstatSync } from 'node:fs';
import { signalStatus } from '../child/exit-status.js';
import { SignalRelay } from '../child/signal-relay.js';
import type { AcquireConfig, Env } from '../config/index.js';
import { badOption, DlockError, EXIT } from '../errors.js';
import { formatVariables, withHeld } from '../hold/variables.js';
import { writeStdoutNow } from '../output.js';
import { isRunning } from '../pid.js';
import {
  ACK,
  errorFromReport,
  KEEPER_COMMAND,
  KEEPER_ENV,
  REPORT_FD,
  type KeeperReport,
  type KeeperRequest,
} from './protocol.js';
import { sectionShell } from './eval-shell.js';
import { selfCommand } from './self.js';

/** Take the lock through a keeper for the watched process; print its variables; 0, or how it failed. */
export async function acquireWithKeeper(config: AcquireConfig, argv: string[], env: Env): Promise<number> {
  const watchPid = config.watchPid ?? sectionShell();
  if (!isRunning(watchPid)) throw badOption('--pid', String(watchPid), 'no such process');
  const request: KeeperRequest = { argv, watchPid, stderr: !stderrIsStdout() };
  const { file, args } = selfCommand();
  const keeper = spawn(file, [...args, KEEPER_COMMAND], {
    detached: true,
    // Never the caller's stdout: `$(dlock acquire ...)` ends when this process exits.
    stdio: ['pipe', 'ignore', request.stderr ? 'inherit' : 'ignore', 'pipe'],
    env: { ...env, [KEEPER_ENV]: JSON.stringify(request) },
  });
  keeper.on('error', () => {});
  keeper.stdin!.on('error', () => {});
  const exited = new Promise<void>((resolve) => keeper.once('exit', () => resolve()).once('error', () => resolve()));
  const signals = new SignalRelay();
  // Ctrl-C while waiting: the keeper (in a session of its own) stops waiting and says so.
  signals.interrupted.addEventListener('abort', () => keeper.kill('SIGTERM'), { once: true });
  try {
    const report = await readReport(keeper.stdio[REPORT_FD] as NodeJS.ReadableStream);
    if (report?.kind === 'held') {
      // Unacknowledged, the keeper releases the lock: nobody could have.
      if (!writeStdoutNow(formatVariables(withHeld(report.variables, env), config.format)))
        throw new DlockError(`could not write the variables to stdout; ${config.key} was released`, EXIT.internal);
      keeper.stdin!.end(ACK);
      keeper.unref();
      return 0;
    }
    // Not held: exit only once the keeper has (nothing is left running).
    keeper.stdin!.end();
    await exited;
    if (report?.kind === 'failed') throw errorFromReport(report);
    if (report?.kind === 'interrupted') return signalStatus(signals.interrupted.reason ?? report.signal ?? 'SIGTERM');
    throw new Error('the keeper process exited before it reported');
  } finally {
    signals.dispose();
    keeper.stdin!.end();
  }
}

/** The one JSON line the keeper writes on its descriptor 3; undefined if it exited without one. */
function readReport(stream: NodeJS.ReadableStream): Promise<KeeperReport | undefined> {
  return new Promise((resolve) => {
    let text = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      text += chunk;
      const end = text.indexOf('\n');
      if (end >= 0) resolve(JSON.parse(text.slice(0, end)) as KeeperReport);
    });
    stream.once('end', () => resolve(undefined));
    stream.once('error', () => resolve(undefined));
  });
}

/** stderr is the very pipe or socket stdout is (`$(dlock acquire ... 2>&1)`): the keeper must not hold it open. */
function stderrIsStdout(): boolean {
  try {
    const [out, err] = [fstatSync(1), fstatSync(2)];
    return out.dev === err.dev && out.ino === err.ino && (out.isFIFO() || out.isSocket());
  } catch {
    return false;
  }
}
