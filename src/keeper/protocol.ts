// Between `dlock acquire` (the foreground) and the keeper it starts. The request travels in the
// environment (only this user can read it, unlike the command line): the acquire's own argv,
// the pid to watch, and whether the keeper has the caller's stderr. The keeper answers with one
// JSON line on its descriptor 3; the foreground, once the variables are on its stdout, writes
// "ok" on the keeper's stdin. A keeper that never reads "ok" releases the lock and exits.

import { closeSync, writeSync } from 'node:fs';
import type { Env } from '../config/index.js';
import { DlockError } from '../errors.js';
import type { SectionVariables } from '../hold/variables.js';

export const KEEPER_COMMAND = '__keeper';
export const KEEPER_ENV = 'DLOCK_KEEPER';
export const REPORT_FD = 3;
export const ACK = 'ok\n';
/**
 * What `dlock release` sends the keeper: stop renewing and exit, without releasing (the releaser does, owner-checked).
 * Not USR1: Node's debugger.
 */
export const STOP_SIGNAL: NodeJS.Signals = 'SIGUSR2';

export interface KeeperRequest {
  argv: string[];
  watchPid: number;
  stderr: boolean;
}

export type KeeperReport =
  | { kind: 'held'; variables: SectionVariables }
  | {
      kind: 'failed';
      exit_code: number;
      message: string;
      event: string;
      fields: Record<string, unknown>;
      silent: boolean;
    }
  | { kind: 'interrupted'; signal: string | undefined };

export function keeperRequest(env: Env): KeeperRequest {
  const text = env[KEEPER_ENV];
  const request = text ? (JSON.parse(text) as KeeperRequest) : undefined;
  if (!request || !Array.isArray(request.argv) || !Number.isInteger(request.watchPid))
    throw new Error(`${KEEPER_COMMAND} is started by dlock acquire only`);
  return request;
}

/** Write the one report and close the descriptor; false when the foreground is gone. */
export function sendReport(report: KeeperReport): boolean {
  try {
    writeSync(REPORT_FD, `${JSON.stringify(report)}\n`);
    return true;
  } catch {
    return false;
  } finally {
    try {
      closeSync(REPORT_FD);
    } catch {
      // closed already
    }
  }
}

/** A DlockError as the foreground rethrows it, with its message, code and JSON event intact. */
export function failedReport(error: DlockError): KeeperReport {
  return {
    kind: 'failed',
    exit_code: error.exitCode,
    message: error.message,
    event: error.event,
    fields: error.fields,
    silent: error.silent,
  };
}

/** The keeper's failure as the foreground throws it: the same message, code and JSON event. */
export function errorFromReport(report: KeeperReport & { kind: 'failed' }): DlockError {
  const { message, exit_code, event, fields, silent } = report;
  return new DlockError(message, exit_code, { event, fields, silent });
}
