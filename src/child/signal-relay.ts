// Signals sent to dlock: before the child runs they abort the wait; once it runs they are
// forwarded to it, and a terminating one is followed by SIGKILL after --kill-after.

const FORWARDED: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2'];
const TERMINATING: ReadonlySet<NodeJS.Signals> = new Set(['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT']);

export class SignalRelay {
  private readonly controller = new AbortController();
  /** Aborts with the signal's name when a terminating signal arrives before the child runs. */
  readonly interrupted: AbortSignal = this.controller.signal;
  private forward: ((signal: NodeJS.Signals, terminating: boolean) => void) | undefined;
  private readonly handlers = new Map<NodeJS.Signals, () => void>();

  constructor() {
    for (const signal of FORWARDED) {
      const handler = () => this.receive(signal);
      this.handlers.set(signal, handler);
      process.on(signal, handler);
    }
  }

  /** From now on, hand every signal to `forward` (the running child). */
  forwardTo(forward: (signal: NodeJS.Signals, terminating: boolean) => void): void {
    this.forward = forward;
  }

  dispose(): void {
    for (const [signal, handler] of this.handlers) process.off(signal, handler);
  }

  private receive(signal: NodeJS.Signals): void {
    const terminating = TERMINATING.has(signal);
    if (this.forward) this.forward(signal, terminating);
    else if (terminating && !this.interrupted.aborted) this.controller.abort(signal);
  }
}
