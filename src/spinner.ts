// The "waiting for ..." spinner: only on a terminal, never under CI or --quiet, and ora
// is loaded only when a spinner will actually show. A spinner never fails dlock.

import { fstatSync } from 'node:fs';
import type { Ora } from 'ora';
import type { Env } from './config/index.js';
import { guardedStream } from './output.js';
import { cut, printable } from './untrusted.js';

/**
 * Longest spinner text, in code points. ora measures the text's width on every frame (80 ms)
 * with Intl.Segmenter, whose cost grows with the square of the length: 30 KB took 0.35 s a
 * frame, 100 KB 20 s, and the event loop (SIGTERM included) waited meanwhile. The fields are
 * cut already; this keeps even a line of escaped fields cheap.
 */
const SPINNER_MAX = 512;

/** CI is set to something other than "", "0" or "false" (CI=false is how jobs opt out). */
export function underCi(env: Env): boolean {
  const value = env.CI?.trim().toLowerCase();
  return value !== undefined && value !== '' && value !== '0' && value !== 'false';
}

/** NO_COLOR (https://no-color.org): present and not empty turns colour off. */
function colourWanted(env: Env): boolean {
  return !env.NO_COLOR;
}

/** Whether stderr is a terminal: a fstat first, so that a pipe or a file needs no node:tty. */
function onTerminal(): boolean {
  try {
    return fstatSync(2).isCharacterDevice() && process.getBuiltinModule('node:tty').isatty(2);
  } catch {
    return false;
  }
}

/** `stream`: stderr by default, opened only when it is a terminal (output.ts: guardedStream). */
export function spinnerWanted(env: Env, quiet: boolean, stream?: NodeJS.WriteStream): boolean {
  if (quiet || underCi(env) || env.TERM === 'dumb') return false;
  if (!stream && !onTerminal()) return false;
  const target = stream ?? guardedStream('stderr');
  // A pty without a size (columns 0) would make ora redraw endlessly: no spinner there either.
  return Boolean(target?.isTTY) && (target?.columns ?? 0) > 0;
}

/** Columns the frame takes besides the text: the spinner character and a space, and one spare. */
const SPINNER_MARGIN = 3;

/** Wide characters (CJK, Hangul, fullwidth forms, emoji) take two columns of a terminal. */
const WIDE = new RegExp(
  '[\\u1100-\\u115f\\u2e80-\\ua4cf\\uac00-\\ud7a3\\uf900-\\ufaff\\ufe30-\\ufe4f\\uff00-\\uff60\\uffe0-\\uffe6' +
    '\\u{1f300}-\\u{1faff}\\u{20000}-\\u{3fffd}]',
  'u',
);

/** `text` in at most `columns` terminal columns, ending in "…" when cut. */
export function fitColumns(text: string, columns: number): string {
  const points = [...text];
  const width = (point: string) => (WIDE.test(point) ? 2 : 1);
  if (points.reduce((sum, point) => sum + width(point), 0) <= columns) return text;
  let used = 1;
  let end = 0;
  while (end < points.length && used + width(points[end]) <= columns) used += width(points[end++]);
  return `${points.slice(0, end).join('')}…`;
}

export class Spinner {
  private ora: Ora | undefined;
  private failed = false;

  constructor(private readonly env: Env) {}

  /**
   * `text` is built with its untrusted parts escaped and cut already; anything raw left is escaped
   * here. It is cut to the terminal's width (read at each update: a resize counts), so the frame
   * is one line: a wrapped one left a trail of copies on screen.
   */
  async update(text: string, given?: NodeJS.WriteStream): Promise<void> {
    if (this.failed) return;
    const stream = given ?? guardedStream('stderr');
    if (!stream) return;
    text = fitColumns(cut(printable(text), SPINNER_MAX), (stream.columns || 80) - SPINNER_MARGIN);
    try {
      if (!this.ora) {
        const { default: ora } = await import('ora');
        // spinnerWanted decided already: ora's own check would take CI=false for CI.
        this.ora = ora({
          stream,
          discardStdin: false,
          hideCursor: false,
          isEnabled: true,
          color: colourWanted(this.env) ? 'cyan' : false,
        }).start(text);
      } else {
        this.ora.text = text;
      }
    } catch {
      // A terminal that went away: waiting goes on without a spinner.
      this.failed = true;
      this.stop();
    }
  }

  stop(): void {
    try {
      this.ora?.stop();
    } catch {
      // Nothing left to clear.
    }
    this.ora = undefined;
  }
}
