// Another process on this host, by pid: whether it still runs, and when it started (which tells
// a reused pid apart). Linux's /proc where there is one; elsewhere kill(pid, 0) alone.

import { readFileSync } from 'node:fs';

/** true while `pid` runs (as any user); a zombie (dead, not reaped yet) counts as gone. */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: it exists, owned by another user.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const fields = statFields(pid);
  return fields === undefined || fields[0] !== 'Z';
}

/** When `pid` started (clock ticks since boot, /proc/<pid>/stat field 22); undefined where that cannot be read. */
export function startTime(pid: number): string | undefined {
  return statFields(pid)?.[22 - 3];
}

/** /proc/<pid>/stat from field 3 (the state) on: "pid (comm) S ..." where comm may hold ")" or spaces. */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}
