// Watching the process a keeper holds its lock for. Node has no pidfd, so this polls
// (kill(pid, 0) and /proc/<pid>/stat, whose zombie state counts as gone) every WATCH_EVERY_MS:
// the lock is released within that much of the process's death, plus one release round trip.

import { isRunning } from '../pid.js';

export const WATCH_EVERY_MS = 100;

/** Aborts once `pid` has exited. `stop()` ends the polling. */
export function watchProcess(pid: number, everyMs = WATCH_EVERY_MS): { gone: AbortSignal; stop: () => void } {
  const controller = new AbortController();
  const timer = setInterval(() => {
    if (isRunning(pid)) return;
    clearInterval(timer);
    controller.abort();
  }, everyMs);
  return { gone: controller.signal, stop: () => clearInterval(timer) };
}
