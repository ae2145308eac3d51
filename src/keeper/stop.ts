// What stops a keeper: `dlock release` (by the owner token) first tells this token's keeper on
// this host, if one runs, to stop renewing, so that the release is not followed by a renewal;
// with --exit-status, the section's status is left beside the keeper's pid file first, so that
// the keeper reads it when the signal comes (its pings and hooks report it).

import { now, sleep } from '../clock.js';
import { isRunning } from '../pid.js';
import { STOP_SIGNAL } from './protocol.js';
import { findKeeper, keeperEnding, removeKeeperNotes, writeSectionStatus } from './runtime.js';

/**
 * Tell this token's keeper on this host to stop renewing, and wait until it has (its pid file is
 * gone); `exitStatus` (0–255), when known, is the section's, for the keeper's pings and hooks.
 */
export async function stopKeeper(token: string, boundMs: number, exitStatus?: string): Promise<KeeperStop> {
  const keeper = findKeeper(token);
  if (!keeper) return { stopped: true };
  // Ending the section itself already (a bound, a lost lock, a signal): it releases, with its status.
  const ending = keeperEnding(token);
  if (ending) return { stopped: false, ending };
  if (exitStatus !== undefined) writeSectionStatus(token, exitStatus);
  try {
    process.kill(keeper.pid, STOP_SIGNAL);
  } catch {
    removeKeeperNotes(token);
    return { stopped: true };
  }
  const deadline = now() + boundMs;
  while (now() < deadline && isRunning(keeper.pid) && findKeeper(token)) {
    const why = keeperEnding(token);
    if (why) return { stopped: false, ending: why };
    await sleep(10);
  }
  return { stopped: true };
}

/** stopped: nothing renews the lock any more, the caller releases it; else its keeper ends the section (`ending`). */
export type KeeperStop = { stopped: true } | { stopped: false; ending: string };
