// Whether a holder on this host still runs: a dlock killed with SIGKILL leaves its lock until
// the TTL runs out, and status (and the busy line) say so. Only for a holder whose host field is
// this host's name: a pid on another host, or a forged one, means nothing here.

import { hostname } from 'node:os';
import { formatDuration } from '../duration.js';
import { type Holder, pidNumber } from '../lockset/index.js';
import { isRunning } from '../pid.js';

/** This host's name, asked once: a listing asks about every lock, and each os.hostname() is a system call. */
let ownHostName: string | undefined;
function ownHost(): string {
  return (ownHostName ??= hostname());
}

/**
 * false when the holder says it is on this host and its pid is gone (a zombie counts as gone); undefined when that
 * cannot be told here.
 */
export function pidAlive(holder: Holder, thisHost: string = ownHost()): boolean | undefined {
  const pid = pidNumber(holder);
  if (pid === undefined || holder.host !== thisHost) return undefined;
  return isRunning(pid);
}

/** "pid N is not running on this host: the lock expires in ..." for a dead holder on this host, else undefined. */
export function deadPidText(holder: Holder, pttlMs: number | undefined): string | undefined {
  if (pidAlive(holder) !== false) return undefined;
  const expiry =
    pttlMs === undefined
      ? ''
      : pttlMs < 0
        ? ': the lock has no expiry (dlock release --force removes it)'
        : `: the lock expires in ${formatDuration(pttlMs)}`;
  return `pid ${pidNumber(holder)} is not running on this host${expiry}`;
}

/** `{ pid_alive }` for JSON, only for a holder on this host. */
export function pidAliveField(holder: Holder): { pid_alive?: boolean } {
  const alive = pidAlive(holder);
  return alive === undefined ? {} : { pid_alive: alive };
}
