// The child: spawn it without a shell (command-path.ts found it as a shell would), hand it
// the lock's environment and the caller's descriptors, and make sure it cannot outlive dlock
// (parent-death signal on Linux).

import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { Writable, type Readable } from 'node:stream';
import { accessSync, constants } from 'node:fs';
import { CommandError, EXIT } from '../errors.js';
import { guardedStream } from '../output.js';
import { signalStatus } from './exit-status.js';
import { childStdio, inheritedFds, withoutInheritedFdsVar } from './inherited-fds.js';

export interface ChildHandle {
  pid: number | undefined;
  /** Resolves to the exit status dlock should pass on: the code, or 128+N for signal N. */
  exited: Promise<number>;
  kill(signal: NodeJS.Signals): void;
}

/** --ping-output: the command's stdout and stderr go through dlock, which keeps their tail (monitor/output-tail.ts). */
export interface OutputCapture {
  tee(from: Readable, to: Writable): void;
}

const SETPRIV = '/usr/bin/setpriv';

/** Does this system let us set the parent-death signal (util-linux setpriv on Linux)? */
function hasSetpriv(): boolean {
  return process.platform === 'linux' && isExecutable(SETPRIV);
}

/** May this process execute `file`? */
export function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Exit status of a finished child as a shell reports it. */
function exitStatus(code: number | null | undefined, signal: string | null | undefined): number {
  if (signal) return signalStatus(signal);
  return code ?? EXIT.internal;
}

/**
 * Spawn `file` with `args`, stdio and the caller's other descriptors inherited (at the same
 * numbers; with `capture`, stdout and stderr are pipes it copies to dlock's); if dlock dies, the
 * kernel sends the child SIGKILL.
 * Plain child_process rather than execa: dlock needs only inherited stdio, an env and the exit
 * status, and execa would add ~12 ms and ~10 MB to every run (see docs/design.md).
 */
export async function spawnChild(
  file: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  capture?: OutputCapture,
): Promise<ChildHandle> {
  const [command, commandArgs] = parentDeathPrefix(file, args);
  const stdio = childStdio(inheritedFds(process.env)) as StdioOptions & unknown[];
  if (capture) [stdio[1], stdio[2]] = ['pipe', 'pipe'];
  const child = spawn(command, commandArgs, { stdio, env: withoutInheritedFdsVar(env) });
  if (capture && child.stdout && child.stderr) {
    // Through output.ts, so that dlock's exit waits until the tee has drained.
    const sink = (name: 'stdout' | 'stderr') =>
      guardedStream(name) ?? new Writable({ write: (_c, _e, done) => done() });
    capture.tee(child.stdout, sink('stdout'));
    capture.tee(child.stderr, sink('stderr'));
  }
  return childHandle(child, file);
}

/** `command args` behind setpriv where it exists: if dlock dies, the kernel sends the child SIGKILL. */
export function parentDeathPrefix(command: string, args: string[]): [string, string[]] {
  return hasSetpriv() ? [SETPRIV, ['--pdeathsig', 'KILL', '--', command, ...args]] : [command, args];
}

/** The handle of a spawned child; `file` names the command in a failure to start it. */
export function childHandle(child: ChildProcess, file: string): ChildHandle {
  const exited = new Promise<number>((resolve, reject) => {
    child.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') reject(new CommandError(`${file}: command not found`, EXIT.notFound));
      else if (error.code === 'EACCES') reject(new CommandError(`${file}: permission denied`, EXIT.notExecutable));
      else reject(error);
    });
    child.once('exit', (code, signal) => resolve(exitStatus(code, signal)));
  });
  return {
    pid: child.pid,
    exited,
    kill(signal) {
      try {
        child.kill(signal);
      } catch {
        // Already gone: nothing to signal.
      }
    },
  };
}
