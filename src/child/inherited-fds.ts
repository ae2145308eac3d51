// The caller's descriptors 3 and up (make's jobserver pipe, `3>file`) reach the command at the
// same numbers, as with flock(1). Node marks every inherited descriptor close-on-exec as it
// starts, and from inside Node they cannot be told apart from Node's own pipes and eventfds,
// so bin/dlock (a sh script before it is JavaScript) lists them before Node starts. The
// standalone executable (Bun) lists them in its first statement (scripts/binary-main.cjs).

import type { StdioOptions } from 'node:child_process';

/** Set by bin/dlock or scripts/binary-main.cjs as "<pid>:<fd> <fd> ..."; never passed on to the command. */
export const INHERITED_FDS_VAR = 'DLOCK_INHERITED_FDS';

/**
 * The caller's descriptors (3 and up) as bin/dlock (or the standalone executable) listed them.
 * Only trusted in the process it was made for: the same pid (sh exec'd node). Without it
 * (`node bin/dlock`), none are known and only stdin, stdout and stderr are passed on.
 */
export function inheritedFds(env: NodeJS.ProcessEnv, pid = process.pid): number[] {
  const match = /^(\d+):([\d ]*)$/.exec(env[INHERITED_FDS_VAR] ?? '');
  if (!match || Number(match[1]) !== pid) return [];
  return match[2]
    .split(' ')
    .filter(Boolean)
    .map(Number)
    .filter((fd) => fd > 2)
    .sort((a, b) => a - b);
}

/**
 * child_process stdio for the command: 0-2 and each inherited descriptor at its own number.
 * A gap is 'ignore', which for 3 and up leaves the number untouched in the child (libuv opens
 * /dev/null only for 0-2); Node's own descriptors there are close-on-exec, so a descriptor the
 * caller had closed stays closed in the command.
 */
export function childStdio(fds: number[]): StdioOptions {
  const stdio: StdioOptions = ['inherit', 'inherit', 'inherit'];
  for (const fd of fds) {
    while (stdio.length < fd) stdio.push('ignore');
    stdio[fd] = fd;
  }
  return stdio;
}

/** The command's environment: the variable is for this dlock only. */
export function withoutInheritedFdsVar(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  if (!(INHERITED_FDS_VAR in env)) return env;
  const { [INHERITED_FDS_VAR]: _, ...rest } = env;
  return rest;
}
