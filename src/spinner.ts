// The "waiting for ..." spinner: only on a terminal, never under CI or --quiet, and ora
// is loaded only when a spinner will actually show.

import type { Ora } from 'ora';
import type { Env } from './config.js';

export function spinnerWanted(env: Env, quiet: boolean, stream: NodeJS.WriteStream = process.stderr): boolean {
  // A pty without a size (columns 0) would make ora redraw endlessly: no spinner there either.
  return Boolean(stream.isTTY) && (stream.columns ?? 0) > 0 && !quiet && !env.CI && env.TERM !== 'dumb';
}

export class Spinner {
  private ora: Ora | undefined;

  async update(text: string): Promise<void> {
    if (!this.ora) {
      const { default: ora } = await import('ora');
      this.ora = ora({ stream: process.stderr, discardStdin: false, hideCursor: false }).start(text);
    } else {
      this.ora.text = text;
    }
  }

  stop(): void {
    this.ora?.stop();
    this.ora = undefined;
  }
}
