// --textfile: node_exporter's textfile collector reads every *.prom file of its directory at each
// scrape; a half-written file would be read as broken metrics. So the text goes to a temporary
// file in the same directory (same file system), is fsync'd, then renamed over the target.

import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { DlockError, EXIT } from '../errors.js';
import { printable } from '../untrusted.js';

/** Replace `path` with `text` in one step: a reader sees the old file or the new one, never part of one. */
export function writeAtomically(path: string, text: string): void {
  // A leading dot: the collector reads *.prom only, and a dot-file is not one.
  const temporary = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  try {
    const fd = openSync(temporary, 'w', 0o644);
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    const why = error instanceof Error && 'code' in error ? String(error.code) : String(error);
    throw new DlockError(`--textfile ${printable(path)}: cannot write it (${why})`, EXIT.cantCreate);
  }
}
