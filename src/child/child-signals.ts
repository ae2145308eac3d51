// Every signal dlock sends to the child (or to the process a keeper watches), logged with why:
// the lock was lost, dlock itself was signalled (forwarded), or the process outlived its grace
// after SIGTERM (kill-after).

import type { Logger } from '../log.js';
import { now } from '../clock.js';
import { isRunning } from '../pid.js';

export type SignalReason = 'lost' | 'forwarded' | 'kill-after';

/** What is signalled: the child (./spawn.ts ChildHandle), or a process known by its pid alone. */
export interface SignalTarget {
  pid: number | undefined;
  kill(signal: NodeJS.Signals): void;
}

/** A process that is not our child, by pid: signalled while it runs, never once it is gone. */
export function processTarget(pid: number): SignalTarget {
  return {
    pid,
    kill(signal) {
      if (!isRunning(pid)) return;
      try {
        process.kill(pid, signal);
      } catch {
        // Gone meanwhile.
      }
    },
  };
}

export class ChildSignals {
  private timer: NodeJS.Timeout | undefined;
  private due = Infinity;
  /** Resolves the promise `settled()` returns, while a SIGKILL is due. */
  private settle: (() => void) | undefined;
  private settling: Promise<void> = Promise.resolve();

  constructor(
    private readonly child: SignalTarget,
    private readonly log: Logger,
    private readonly lock: { key: string; fence?: string },
    /** The longest grace before SIGKILL (--kill-after, capped at ttl/3). */
    private readonly maxGraceMs: number,
    /** How the log lines name the process. */
    private readonly name = 'the command',
  ) {}

  /** Signal the child first, then log it: a slow stderr never delays a kill. */
  send(signal: NodeJS.Signals, reason: SignalReason): void {
    this.child.kill(signal);
    const why =
      reason === 'lost'
        ? 'the lock was lost'
        : reason === 'forwarded'
          ? 'dlock received it'
          : 'it was still running after its grace';
    this.log.event(
      'signal',
      { ...this.lock, signal, reason, pid: this.child.pid },
      `sent ${signal} to ${this.name} (pid ${this.child.pid}): ${why}`,
      reason === 'kill-after' ? 'warn' : 'info',
    );
  }

  /**
   * SIGKILL the child after a delay (the earliest one asked for wins). `stallNoticeMs`: when the
   * timer fires later than that after it was due (dlock itself stalled), say so.
   */
  killLater(delayMs: number, stallNoticeMs = Infinity): void {
    const at = now() + Math.max(0, Math.min(delayMs, this.maxGraceMs));
    if (at >= this.due) return;
    this.due = at;
    clearTimeout(this.timer);
    if (!this.settle) this.settling = new Promise((resolve) => (this.settle = resolve));
    this.timer = setTimeout(() => {
      this.send('SIGKILL', 'kill-after');
      this.markSettled();
      const lateMs = Math.round(now() - at);
      if (lateMs > stallNoticeMs) {
        this.log.event(
          'stalled',
          { ...this.lock, late_ms: lateMs },
          `dlock itself was stalled: its SIGKILL timer fired ${lateMs}ms late, past the moment ${this.name} had to ` +
            'be gone; it may have run past the lease',
        );
      }
    }, at - now());
  }

  /**
   * SIGKILL at once, the lock's kill deadline having passed while dlock itself was stalled (its
   * deadline timer fired `lateMs` late): no time is left for a grace. Says so.
   */
  killStalled(lateMs: number | undefined): void {
    this.send('SIGKILL', 'lost');
    const late = lateMs === undefined ? {} : { late_ms: Math.round(lateMs) };
    this.log.event(
      'stalled',
      { ...this.lock, ...late },
      `dlock itself was stalled: its deadline timer fired ${Math.round(lateMs ?? 0)}ms late, past the ` +
        `moment ${this.name} had to be gone; killed it at once (SIGKILL), but it may have run past the lease`,
    );
  }

  /** Resolves once no SIGKILL is due: sent, cancelled, or never asked for. */
  settled(): Promise<void> {
    return this.settling;
  }

  cancel(): void {
    clearTimeout(this.timer);
    this.markSettled();
  }

  private markSettled(): void {
    this.settle?.();
    this.settle = undefined;
  }
}
