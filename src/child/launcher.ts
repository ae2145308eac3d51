// The command made ready while dlock waits in line. Starting a process from Node costs a fork
// of Node itself (~4.5 ms of blocked event loop on this machine, measured in docs/performance.md)
// and setpriv's own start (~1.5 ms): paid after the lock is granted, that is time
// the next holder waits and the lock is held with nothing running. So when dlock has to wait,
// it starts the process at once as a small shell (behind setpriv, like the command itself)
// that sets the arguments up and blocks reading a pipe; when the lock is granted dlock writes
// the fencing token (and slot, and the store's own variables) there and the shell `exec`s the
// command: same pid, the command's environment, arguments and descriptors exactly as a direct
// spawn gives them. The command's
// words are in the environment while it waits, not in its argv, so `ps`/`pgrep -f` do not show
// a command that is not running yet. If dlock gives up (busy, signal, error) it kills the
// waiting shell; if dlock dies, the parent-death signal (or the pipe's end) does.

import { spawn, type ChildProcess } from 'node:child_process';
import type { Writable } from 'node:stream';
import { childStdio, inheritedFds, withoutInheritedFdsVar } from './inherited-fds.js';
import { childHandle, isExecutable, parentDeathPrefix, type ChildHandle } from './spawn.js';

/**
 * dash, by name: what a shell does to the environment it passes on differs between shells (bash
 * adds SHLVL, busybox has its own list), and dash's is known and undone or avoided here. Where
 * there is no dash the command is spawned on the grant.
 */
const SH = '/bin/dash';
/** Variables of the waiting shell only: the words of the command, and PWD as the caller had it. */
const WORD = 'DLOCK_LAUNCH_';
const VALID_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Variables dash sets itself, whatever the environment says (it exports them if they came in). */
const SHELL_OWNED = new Set(['IFS', 'OPTIND', 'PPID']);

export interface PreparedChild {
  /**
   * Run the command now, with its fencing token (and slot, and the store's variables for a holder).
   * Undefined when the waiting shell is gone (killed meanwhile) or cannot take one of the store's
   * variables (a name sh would not export, a value with a newline): the caller spawns the command itself.
   */
  start(fence: string, slot: number | undefined, store?: Record<string, string>): ChildHandle | undefined;
  /** Not started: kill the waiting shell. Nothing once started. */
  discard(): void;
}

/**
 * The script of the waiting shell; `gate` is its pipe's descriptor (0-9: sh's limit). Every
 * variable it sets is in WORD's namespace or unset before the exec, so the command's
 * environment is the one dlock built. dash adds PWD when it is missing and corrects it when it
 * is not the working directory: both are undone.
 */
function script(gate: number): string {
  return [
    `${WORD}I=0`,
    `while [ "$${WORD}I" -lt "$${WORD}ARGC" ]; do eval "set -- \\"\\$@\\" \\"\\$${WORD}$${WORD}I\\""; unset ` +
      `"${WORD}$${WORD}I"; ${WORD}I=$((${WORD}I + 1)); done`,
    `if [ -n "\${${WORD}PWD+set}" ]; then PWD=$${WORD}PWD; else unset PWD; fi`,
    `read -r ${WORD}GO <&${gate} || exit 0`,
    // The store's variables: one line of `export NAME='value' …`, or none.
    `read -r ${WORD}ENV <&${gate} || ${WORD}ENV=`,
    `DLOCK_FENCING_TOKEN=\${${WORD}GO%%:*}`,
    `export DLOCK_FENCING_TOKEN`,
    `case $${WORD}GO in *:-) ;; *) DLOCK_SLOT=\${${WORD}GO#*:}; export DLOCK_SLOT ;; esac`,
    `eval "$${WORD}ENV"`,
    `unset ${WORD}I ${WORD}ARGC ${WORD}PWD ${WORD}GO ${WORD}ENV`,
    `exec "$@" ${gate}<&-`,
  ].join('\n');
}

/**
 * Start the waiting shell for `file args` with `env` (the command's environment without
 * DLOCK_FENCING_TOKEN, and DLOCK_SLOT with --slots: the grant brings them). Undefined where a shell cannot
 * give exactly the direct spawn's environment and descriptors (no dash, a variable name sh would
 * drop, IFS, OPTIND or PPID set, the caller's descriptors 3 to 9 all open): then the command is
 * spawned when granted.
 */
export function prepareChild(file: string, args: string[], env: NodeJS.ProcessEnv): PreparedChild | undefined {
  const names = Object.keys(env);
  if (process.platform === 'win32' || !isExecutable(SH)) return undefined;
  if (names.some((name) => !VALID_NAME.test(name) || name.startsWith(WORD) || SHELL_OWNED.has(name))) return undefined;
  // The pipe goes at a number the caller left closed (sh reads only 0-9); the exec closes it.
  const fds = inheritedFds(process.env);
  const gate = [3, 4, 5, 6, 7, 8, 9].find((fd) => !fds.includes(fd));
  if (gate === undefined) return undefined;
  const stdio = childStdio(fds) as unknown[];
  while (stdio.length <= gate) stdio.push('ignore');
  stdio[gate] = 'pipe';

  const words = Object.fromEntries([file, ...args].map((word, i) => [`${WORD}${i}`, word]));
  const shellEnv: NodeJS.ProcessEnv = {
    ...withoutInheritedFdsVar(env),
    ...words,
    [`${WORD}ARGC`]: String(args.length + 1),
    ...(env.PWD === undefined ? {} : { [`${WORD}PWD`]: env.PWD }),
  };
  let shell: ChildProcess;
  try {
    const [command, commandArgs] = parentDeathPrefix(SH, ['-c', script(gate), 'sh']);
    shell = spawn(command, commandArgs, { stdio: stdio as never, env: shellEnv });
  } catch {
    return undefined;
  }
  const pipe = shell.stdio[gate] as Writable | null;
  // A pipe write to a shell that died meanwhile: the exit says what happened.
  pipe?.on('error', () => {});
  shell.on('error', () => {});
  const alive = () => shell.pid !== undefined && shell.exitCode === null && shell.signalCode === null;
  if (!pipe || !alive()) {
    shell.kill('SIGKILL');
    return undefined;
  }
  // Watch the exit from now on: a shell that dies while waiting is noticed by start().
  const handle = childHandle(shell, file);
  let started = false;
  const discard = () => {
    if (started) return;
    started = true;
    pipe.destroy();
    if (alive()) shell.kill('SIGKILL');
    handle.exited.catch(() => {});
  };
  return {
    start(fence, slot, store = {}) {
      if (started) return undefined;
      const exports = storeExports(store);
      if (
        !alive() ||
        !/^\d+$/.test(fence) ||
        (slot !== undefined && !Number.isInteger(slot)) ||
        exports === undefined
      ) {
        discard();
        return undefined;
      }
      started = true;
      pipe.end(`${fence}:${slot ?? '-'}\n${exports}`);
      return handle;
    },
    discard,
  };
}

/**
 * The store's variables as the one line the waiting shell evals (`export NAME='value' …\n`), "" for none;
 * undefined when one cannot travel so: a name sh would drop or that is the shell's, a newline in a value.
 */
function storeExports(store: Record<string, string>): string | undefined {
  const entries = Object.entries(store);
  if (entries.length === 0) return '';
  const bad = ([name, value]: [string, string]) =>
    !VALID_NAME.test(name) || name.startsWith(WORD) || SHELL_OWNED.has(name) || /[\n\0]/.test(value);
  if (entries.some(bad)) return undefined;
  return `export ${entries.map(([name, value]) => `${name}='${value.replace(/'/g, `'\\''`)}'`).join(' ')}\n`;
}
