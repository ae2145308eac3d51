// Before anything is locked, find the command as a shell would and check that it can start:
// 127 "not found" and 126 "not executable" come from here, with one "dlock: " line, rather
// than from a failed exec after the lock was taken.

import { accessSync, closeSync, constants, openSync, readSync, statSync } from 'node:fs';
import { basename, delimiter, join } from 'node:path';
import { CommandError, EXIT } from '../errors.js';
import { printable } from '../untrusted.js';

/** What the kernel reads of a script to find its `#!` line (Linux BINPRM_BUF_SIZE). */
const HEAD_BYTES = 256;
/** How deep an interpreter may itself be a script (Linux allows a few levels; so do we). */
const MAX_INTERPRETER_DEPTH = 4;

/** Find the executable as a shell would; throws CommandError with 127 or 126 like sh. */
export function resolveCommand(name: string, path: string | undefined, depth = 0): string {
  const file = findExecutable(name, path);
  checkInterpreter(name, file, path, depth);
  return file;
}

function findExecutable(name: string, path: string | undefined): string {
  if (name.includes('/')) {
    checkExecutable(name, name);
    return name;
  }
  let denied: string | undefined;
  for (const dir of (path ?? '/usr/local/bin:/usr/bin:/bin').split(delimiter)) {
    const candidate = join(dir || '.', name);
    try {
      if (!statSync(candidate).isFile()) continue;
    } catch {
      continue;
    }
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      denied ??= candidate;
    }
  }
  if (denied) throw new CommandError(`${name}: permission denied`, EXIT.notExecutable);
  throw new CommandError(`${name}: command not found`, EXIT.notFound);
}

function checkExecutable(shown: string, file: string): void {
  let isFile: boolean;
  try {
    isFile = statSync(file).isFile();
  } catch {
    throw new CommandError(`${shown}: no such file or directory`, EXIT.notFound);
  }
  if (!isFile) throw new CommandError(`${shown}: is a directory`, EXIT.notExecutable);
  try {
    accessSync(file, constants.X_OK);
  } catch {
    throw new CommandError(`${shown}: permission denied`, EXIT.notExecutable);
  }
}

/**
 * A script's `#!` interpreter must exist (else 127) and be executable (else 126), as bash
 * reports "bad interpreter"; for `#!/usr/bin/env name` (or `env -S name ...`), `name` must be
 * found on PATH. A file without `#!` that is not a binary is run by /bin/sh (execvp's rule,
 * and bash's), so it needs no check; neither does a file dlock cannot read (exec decides).
 */
function checkInterpreter(shown: string, file: string, path: string | undefined, depth: number): void {
  const line = shebangLine(file);
  if (line === undefined) return;
  // As the kernel splits it: the interpreter up to a space or tab, the rest as one argument.
  const [, interpreter, argument] = /^[ \t]*([^ \t]*)[ \t]*(.*?)[ \t]*$/.exec(line)!;
  if (interpreter === '') return;
  const bad = (what: string, reason: string, code: number) =>
    new CommandError(`${shown}: ${printable(what)}: bad interpreter: ${reason}`, code);
  try {
    checkExecutable(interpreter, interpreter);
  } catch (error) {
    if (!(error instanceof CommandError)) throw error;
    throw error.exitCode === EXIT.notFound
      ? bad(interpreter, 'no such file or directory', EXIT.notFound)
      : bad(interpreter, 'permission denied', EXIT.notExecutable);
  }
  if (depth >= MAX_INTERPRETER_DEPTH) return;
  const target = basename(interpreter) === 'env' ? envCommand(argument) : undefined;
  try {
    if (target !== undefined) resolveCommand(target, path, depth + 1);
    else checkInterpreter(interpreter, interpreter, path, depth + 1);
  } catch (error) {
    if (!(error instanceof CommandError)) throw error;
    throw bad(`${interpreter} ${argument}`.trim(), error.message, error.exitCode);
  }
}

/** The text after `#!` on a script's first line, or undefined when the file is no script. */
function shebangLine(file: string): string | undefined {
  const head = Buffer.alloc(HEAD_BYTES);
  let length: number;
  try {
    const fd = openSync(file, 'r');
    try {
      length = readSync(fd, head, 0, HEAD_BYTES, 0);
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
  if (length < 2 || head[0] !== 0x23 || head[1] !== 0x21) return undefined;
  const end = head.subarray(0, length).indexOf(0x0a);
  // A first line longer than the kernel reads: leave it to exec.
  if (end === -1 && length === HEAD_BYTES) return undefined;
  return head.subarray(2, end === -1 ? length : end).toString('latin1');
}

/** The command `env` will look up: its one argument, or the first word after `-S` that is no option or NAME=value. */
function envCommand(argument: string): string | undefined {
  if (argument === '') return undefined;
  if (!argument.startsWith('-')) return argument;
  const split = /^-S[ \t]*(.*)$/.exec(argument);
  if (!split) return undefined;
  return split[1].split(/[ \t]+/).find((word) => word !== '' && !word.startsWith('-') && !word.includes('='));
}
