// Which process a keeper watches when --pid does not say: the shell whose section it is. In
// `eval "$(dlock acquire k)"` that is the shell reading acquire's stdout, but dlock's parent is
// not always that shell: bash forks a subshell for `$(dlock acquire k 2>/dev/null)`, and
// `$(timeout 60 dlock acquire k)` or a wrapper function put another process between them. Each
// of those exits as soon as acquire does, and watching it released the lock ~100 ms after the
// section began. The shell that reads the pipe on acquire's stdout is the one that runs the
// section: the nearest ancestor holding that pipe's read end. None (stdout is a file or a
// terminal, or no /proc): dlock's parent, as before.

import { fstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { readEntry } from '../child/tree.js';

/** How many ancestors are looked at, at the most (a loop in forged /proc data ends here too). */
const MAX_DEPTH = 32;

/** The process a keeper watches by default: the ancestor reading acquire's stdout pipe, else the parent. */
export function sectionShell(): number {
  const parent = process.ppid;
  const pipe = stdoutPipe();
  if (pipe === undefined) return parent;
  let pid = parent;
  for (let depth = 0; depth < MAX_DEPTH && pid > 1; depth++) {
    if (readsPipe(pid, pipe)) return pid;
    const entry = readEntry(pid);
    if (!entry || entry.ppid === pid) break;
    pid = entry.ppid;
  }
  return parent;
}

/** `pipe:[<inode>]`, as /proc names the pipe on this process's stdout; undefined when stdout is no pipe. */
function stdoutPipe(): string | undefined {
  try {
    const stat = fstatSync(1);
    return stat.isFIFO() ? `pipe:[${stat.ino}]` : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `pid` holds `pipe` open for reading (/proc/<pid>/fdinfo's flags: O_RDONLY). */
function readsPipe(pid: number, pipe: string): boolean {
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return false;
  }
  return fds.some((fd) => {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`) !== pipe) return false;
      const flags = /^flags:\s*([0-7]+)$/m.exec(readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'latin1'));
      // O_ACCMODE is 3; O_RDONLY is 0.
      return flags !== null && (parseInt(flags[1]!, 8) & 3) === 0;
    } catch {
      return false;
    }
  });
}
