// `ps` shows every process's command line to every user of the host: a password given with
// --redis would stay readable there for the whole run. Rewrite the title with it masked
// (Linux: the kernel's copy of argv is overwritten). Environment variables are the safe place.

import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { maskSecrets } from './secrets.js';

export function hideSecretsFromPs(argv: string[]): void {
  const shown = argv.map((arg) => maskSecrets(arg));
  if (shown.every((arg, i) => arg === argv[i])) return;
  const title = ['dlock', ...shown].join(' ');
  try {
    process.title = title;
  } catch {
    // A runtime that cannot set the title: overwritten below.
  }
  try {
    // Node rewrites argv in place; Bun (the standalone executable) names only the thread.
    if (!readFileSync('/proc/self/cmdline', 'latin1').startsWith(`${title}\0`)) overwriteArgv(title);
  } catch {
    // No /proc: nothing more to do here.
  }
}

/** Write `title`, NUL-padded, over the argv area the kernel shows in /proc/<pid>/cmdline, as Node does. */
function overwriteArgv(title: string): void {
  const stat = readFileSync('/proc/self/stat', 'latin1');
  // Fields after "(comm)" start at field 3; arg_start and arg_end are fields 48 and 49 (proc(5)).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const start = Number(fields[48 - 3]);
  const size = Number(fields[49 - 3]) - start;
  if (!(start > 0 && size > 1)) return;
  const bytes = Buffer.alloc(size);
  Buffer.from(title).copy(bytes, 0, 0, size - 1);
  const fd = openSync('/proc/self/mem', 'r+');
  try {
    writeSync(fd, bytes, 0, size, start);
  } finally {
    closeSync(fd);
  }
}
