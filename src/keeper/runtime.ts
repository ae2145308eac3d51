// What a keeper leaves for others to find on this host, in the runtime directory (../runtime-dir.ts):
// its pid file, named by a hash of the owner token, so that `dlock release` can stop it; beside it,
// the section's exit status that `dlock release --exit-status` leaves there before it signals the
// keeper; and keeper.log, where it writes what it could not say on a stderr that is gone.

import { createHash } from 'node:crypto';
import { appendFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Env } from '../config/index.js';
import { isRunning, startTime } from '../pid.js';
import { runtimeDir } from '../runtime-dir.js';

/** The file a keeper log falls back to (JSON lines). */
export function keeperLogPath(dir: string): string {
  return join(dir, 'keeper.log');
}

export function appendKeeperLog(line: string, env: Env = process.env): void {
  const dir = runtimeDir(env);
  if (!dir) return;
  try {
    appendFileSync(keeperLogPath(dir), line, { mode: 0o600 });
  } catch {
    // Nowhere left to say it.
  }
}

function pidFile(dir: string, token: string): string {
  return join(dir, `keeper-${createHash('sha256').update(token).digest('hex').slice(0, 32)}.pid`);
}

function statusFile(dir: string, token: string): string {
  return pidFile(dir, token).replace(/\.pid$/, '.exit');
}

function endingFile(dir: string, token: string): string {
  return pidFile(dir, token).replace(/\.pid$/, '.ending');
}

/**
 * Say that `token`'s keeper is ending the section itself (`why`: a bound, a lost lock, a signal), so
 * that a `dlock release` that comes meanwhile (a trap on EXIT) leaves the release, and the
 * section's status, to it (./stop.ts). Removed with the pid file.
 */
export function writeKeeperEnding(token: string, why: string, env: Env = process.env): void {
  const dir = runtimeDir(env);
  if (!dir) return;
  try {
    writeFileSync(endingFile(dir, token), `${why}\n`, { mode: 0o600 });
  } catch {
    // Then a release meanwhile releases as the owner, as before.
  }
}

/** Why `token`'s keeper is ending the section itself, when it is (a word, at most 32 characters). */
export function keeperEnding(token: string, env: Env = process.env): string | undefined {
  const dir = runtimeDir(env);
  if (!dir) return undefined;
  try {
    const why = readFileSync(endingFile(dir, token), 'utf8').trim();
    return /^[a-z-]{1,32}$/.test(why) ? why : 'ending';
  } catch {
    return undefined;
  }
}

/** Remove what a keeper of `token` left beside its pid file: the ending note and an unread exit status. */
export function removeKeeperNotes(token: string, env: Env = process.env): void {
  const dir = runtimeDir(env);
  if (!dir) return;
  rmSync(endingFile(dir, token), { force: true });
  rmSync(statusFile(dir, token), { force: true });
}

/** Leave the section's exit status (0–255) for `token`'s keeper; false when it could not be written. */
export function writeSectionStatus(token: string, status: string, env: Env = process.env): boolean {
  const dir = runtimeDir(env);
  if (!dir) return false;
  try {
    writeFileSync(statusFile(dir, token), `${status}\n`, { mode: 0o600 });
    return true;
  } catch {
    return false;
  }
}

/** The exit status `dlock release --exit-status` left for `token`'s keeper (0–255), removed once read. */
export function takeSectionStatus(token: string, env: Env = process.env): number | undefined {
  const dir = runtimeDir(env);
  if (!dir) return undefined;
  const file = statusFile(dir, token);
  let text: string;
  try {
    text = readFileSync(file, 'utf8').trim();
  } catch {
    return undefined;
  }
  removeFile(file);
  const status = /^\d{1,3}$/.test(text) ? Number(text) : undefined;
  return status !== undefined && status <= 255 ? status : undefined;
}

/** Record this process as the keeper of `token`; returns the file (undefined: no runtime directory). */
export function writeKeeperFile(token: string, env: Env = process.env): string | undefined {
  const dir = runtimeDir(env);
  if (!dir) return undefined;
  const file = pidFile(dir, token);
  try {
    writeFileSync(file, `${process.pid} ${startTime(process.pid) ?? ''}\n`, { mode: 0o600 });
    return file;
  } catch {
    return undefined;
  }
}

export function removeFile(file: string | undefined): void {
  if (file) rmSync(file, { force: true });
}

/** The running keeper of `token` on this host: its pid and file, when there is one. */
export function findKeeper(token: string, env: Env = process.env): { pid: number; file: string } | undefined {
  const dir = runtimeDir(env);
  if (!dir) return undefined;
  const file = pidFile(dir, token);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  const [pidText, started] = text.trim().split(' ');
  const pid = Number(pidText);
  // A keeper that was SIGKILLed left its file: its pid may be another process's by now.
  if (!Number.isInteger(pid) || pid <= 1 || !isRunning(pid) || (started && startTime(pid) !== started)) {
    removeFile(file);
    return undefined;
  }
  return { pid, file };
}
