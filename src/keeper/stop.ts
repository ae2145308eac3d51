// What stops a keeper: `dlock release` (by the owner token) first tells this token's keeper on
// this host, if one runs, to stop renewing, so that the release is not followed by a renewal.

import { now, sleep } from '../clock.js';
import { isRunning } from '../pid.js';
import { STOP_SIGNAL } from './protocol.js';
import { findKeeper } from './runtime.js';

/** Tell this token's keeper on this host to stop renewing, and wait until it has (its pid file is gone). */
export async function stopKeeper(token: string, boundMs: number): Promise<void> {
  const keeper = findKeeper(token);
  if (!keeper) return;
  try {
    process.kill(keeper.pid, STOP_SIGNAL);
  } catch {
    return;
  }
  const deadline = now() + boundMs;
  while (now() < deadline && isRunning(keeper.pid) && findKeeper(token)) await sleep(10);
}
