// Whether a holder on this host still runs: a dlock killed with SIGKILL leaves its lock until
// the TTL runs out, and status (and the busy line) say so. Only for a holder whose host field is
// this host's name: a pid on another host, or a forged one, means nothing here. A hold taken by
// `dlock acquire --no-keeper` has no process on purpose (it spans CI jobs; its acquire exited at
// once): it is said to be held across steps, never dead.

import { hostname } from 'node:os';
import { formatDuration } from '../duration.js';
import { NO_KEEPER_CMD } from '../holder-cmd.js';
import { type Holder, isClosed, pidNumber } from '../backend/index.js';
import { printable } from '../untrusted.js';
import { isRunning } from '../pid.js';

/** This host's name, asked once: a listing asks about every lock, and each os.hostname() is a system call. */
let ownHostName: string | undefined;
function ownHost(): string {
  return (ownHostName ??= hostname());
}

/**
 * Whether the hold was taken by `dlock acquire --no-keeper`, as its `cmd` says: no process holds
 * it (this dlock stores no pid; an older one stored the acquire's, which exited at once).
 */
export function isNoKeeper(holder: Pick<Holder, 'cmd'>): boolean {
  return holder.cmd === NO_KEEPER_CMD;
}

/** Whether no process holds it by design: a --no-keeper hold, or a `dlock hold` (its `hold` field). */
export function hasNoProcess(holder: Pick<Holder, 'cmd' | 'hold'>): boolean {
  return isNoKeeper(holder) || holder.hold === true;
}

/**
 * false when the holder says it is on this host and its pid is gone (a zombie counts as gone); undefined when that
 * cannot be told here, or means nothing (a --no-keeper hold has no process).
 */
export function pidAlive(holder: Holder, thisHost: string = ownHost()): boolean | undefined {
  const pid = pidNumber(holder);
  if (pid === undefined || holder.host !== thisHost || hasNoProcess(holder)) return undefined;
  return isRunning(pid);
}

/** ": the lock expires in ..." (or has no expiry) for a known PTTL, else "". */
function expiryText(pttlMs: number | undefined): string {
  if (pttlMs === undefined) return '';
  return pttlMs < 0
    ? ': the lock has no expiry (dlock release --force removes it)'
    : `: the lock expires in ${formatDuration(pttlMs)}`;
}

/** "pid N is not running on this host: the lock expires in ..." for a dead holder on this host, else undefined. */
export function deadPidText(holder: Holder, pttlMs: number | undefined): string | undefined {
  if (pidAlive(holder) !== false) return undefined;
  return `pid ${pidNumber(holder)} is not running on this host${expiryText(pttlMs)}`;
}

/**
 * "held across steps (--no-keeper): no process renews it; it expires in ... unless dlock renew
 * extends it" for a --no-keeper hold, else undefined.
 */
export function noKeeperText(holder: Holder, pttlMs: number | undefined): string | undefined {
  if (!isNoKeeper(holder)) return undefined;
  const what = 'held across steps (--no-keeper): no process renews it';
  if (pttlMs === undefined) return what;
  if (pttlMs < 0) return `${what}${expiryText(pttlMs)}`;
  // Closed by release --force: nobody owns it, so nobody can renew it.
  const unless = isClosed(holder) ? '' : ' unless dlock renew extends it';
  return `${what}; it expires in ${formatDuration(pttlMs)}${unless}`;
}

/** What status adds about the holder's process: it is dead, or there is none by design (--no-keeper). */
export function processText(holder: Holder, pttlMs: number | undefined): string | undefined {
  return noKeeperText(holder, pttlMs) ?? deadPidText(holder, pttlMs);
}

/** A table's PID cell: the pid escaped ("none" for a --no-keeper hold without one), tagged when dead or --no-keeper. */
export function pidCell(holder: Holder): string {
  if (holder.hold) return 'none (hold)';
  if (isNoKeeper(holder)) return `${pidShown(holder)} (--no-keeper)`;
  return `${pidShown(holder)}${deadPidText(holder, undefined) ? ' (not running)' : ''}`;
}

/** The pid escaped; "none" for a --no-keeper hold that stores none. */
export function pidShown(holder: Holder): string {
  return printable(holder.pid) || (hasNoProcess(holder) ? 'none' : '');
}

/** `{ pid_alive }` for a holder on this host, `{ no_keeper: true }` for a --no-keeper hold: for JSON. */
export function processFields(holder: Holder): { pid_alive?: boolean; no_keeper?: true } {
  if (holder.hold) return {};
  if (isNoKeeper(holder)) return { no_keeper: true };
  const alive = pidAlive(holder);
  return alive === undefined ? {} : { pid_alive: alive };
}
