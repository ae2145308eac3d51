// The "waiting for ..." spinner: only on a terminal, never under CI or --quiet, and ora
// is loaded only when a spinner will actually show. A spinner never fails dlock.

import type { Ora } from 'ora';
import type { Env } from './config.js';
import { printable } from './untrusted.js';

/** CI is set to something other than "", "0" or "false" (CI=false is how jobs opt out). */
export function underCi(env: Env): boolean {
  const value = env.CI?.trim().toLowerCase();
  return value !== undefined && value !== '' && value !== '0' && value !== 'false';
}

/** NO_COLOR (https://no-color.org): present and not empty turns colour off. */
export function colourWanted(env: Env): boolean {
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
    text = printable(text);
    try {
      if (!this.ora) {
        const { default: ora } = await import('ora');
        // spinnerWanted decided already: ora's own check would take CI=false for CI.
        this.ora = ora({ stream: process.stderr, discardStdin: false, hideCursor: false, isEnabled: true, color: colourWanted(this.env) ? 'cyan' : false }).start(text);
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
