// The "waiting for ..." spinner: only on a terminal, never under CI or --quiet, and ora
// is loaded only when a spinner will actually show. A spinner never fails dlock.

import type { Ora } from 'ora';
import type { Env } from './config/index.js';
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

export function spinnerWanted(env: Env, quiet: boolean, stream: NodeJS.WriteStream = process.stderr): boolean {
  // A pty without a size (columns 0) would make ora redraw endlessly: no spinner there either.
  return Boolean(stream.isTTY) && (stream.columns ?? 0) > 0 && !quiet && !underCi(env) && env.TERM !== 'dumb';
}

export class Spinner {
  private ora: Ora | undefined;
  private failed = false;

  constructor(private readonly env: Env) {}

  /** `text` is built with its untrusted parts escaped and cut already; anything raw left is escaped here. */
  async update(text: string): Promise<void> {
    if (this.failed) return;
    text = cut(printable(text), SPINNER_MAX);
    try {
      if (!this.ora) {
        const { default: ora } = await import('ora');
        // spinnerWanted decided already: ora's own check would take CI=false for CI.
        this.ora = ora({
          stream: process.stderr,
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
