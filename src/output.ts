// dlock's own stdout and stderr. Writing there must never change what happens to the lock:
// a closed, broken or read-only stream (`2>&1 | true`, `2>&-`, a logger that died: EPIPE,
// EBADF, EIO...) only loses the text, and dlock exits once what it wrote has drained.

import { writeSync } from 'node:fs';

export type StdioName = 'stdout' | 'stderr';

/** Where a command writes its report or its log lines. */
export interface Output {
  write(text: string): void;
}

const broken = new Set<StdioName>();
const guarded = new Set<StdioName>();
/** A write returned false and no 'drain' came yet (Bun keeps writableLength 0 meanwhile). */
const backlogged = new Set<StdioName>();

/** process.stdout/stderr with an 'error' listener, or undefined when it cannot be used. */
function stream(name: StdioName): NodeJS.WriteStream | undefined {
  if (broken.has(name)) return undefined;
  try {
    // The getter creates the stream on first use; an odd fd could make that throw.
    const opened = process[name];
    if (!guarded.has(name)) {
      guarded.add(name);
      // Without a listener, a failed write (reported asynchronously) would crash dlock.
      opened.on('error', () => broken.add(name));
      opened.on('drain', () => backlogged.delete(name));
    }
    return opened;
  } catch {
    broken.add(name);
    return undefined;
  }
}

/**
 * process.stdout or process.stderr for code that writes to it itself (ora, a tee of the command's
 * output), with the 'error' listener installed first. Nothing else creates them: a run that prints
 * nothing never does (creating one was ~4 ms of the binary's start-up, 1 ms of Node's).
 */
export function guardedStream(name: StdioName): NodeJS.WriteStream | undefined {
  return stream(name);
}

/** Write `text`; if the stream is gone, drop it. Never throws. */
export function write(name: StdioName, text: string): void {
  const target = stream(name);
  if (!target) return;
  try {
    if (!target.write(text)) backlogged.add(name);
  } catch {
    broken.add(name);
  }
}

export const stdout: Output = { write: (text) => write('stdout', text) };
export const stderr: Output = { write: (text) => write('stderr', text) };

/** Resolves once everything written to `name` has reached the OS (or the stream failed). */
function drained(name: StdioName): Promise<void> {
  // Never opened: nothing was written there.
  if (!guarded.has(name)) return Promise.resolve();
  const target = stream(name);
  if (!target) return Promise.resolve();
  if (target.writableLength === 0) {
    if (!backlogged.has(name)) return Promise.resolve();
    // The standalone executable (Bun) reports nothing pending on a full pipe: wait for 'drain'.
    return new Promise((resolve) => {
      const done = () => {
        for (const event of ['drain', 'error', 'close']) target.off(event, done);
        resolve();
      };
      for (const event of ['drain', 'error', 'close']) target.once(event, done);
    });
  }
  return new Promise((resolve) => {
    try {
      // Writes complete in order: this callback runs after every earlier write has.
      target.write('', () => resolve());
    } catch {
      resolve();
    }
  });
}

/**
 * All of `text` on stdout now, written synchronously, or false: what acquire prints for eval (its
 * variables, or the line that makes eval fail). Through the stream, the standalone executable (Bun)
 * could exit before a write to a pipe had left it, and an empty `$(dlock acquire …)` lets
 * `eval … || exit` run the steps. A full non-blocking pipe (EAGAIN) is waited on, 1 ms at a time.
 */
export function writeStdoutNow(text: string): boolean {
  const bytes = Buffer.from(text);
  let waits = 0;
  for (let done = 0; done < bytes.length;) {
    try {
      done += writeSync(1, bytes, done);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN' || ++waits > EAGAIN_WAITS) return false;
      Atomics.wait(PAUSE, 0, 0, 1);
    }
  }
  return true;
}

/** How many 1 ms pauses a full stdout pipe gets before the text is given up (10 s). */
const EAGAIN_WAITS = 10_000;
const PAUSE = new Int32Array(new SharedArrayBuffer(4));

/** Wait until stdout and stderr have drained: exiting earlier would cut a piped output. */
export async function flushStdio(): Promise<void> {
  await Promise.all([drained('stdout'), drained('stderr')]);
}
