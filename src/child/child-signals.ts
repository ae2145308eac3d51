// Every signal dlock sends to the child, logged with why: the lock was lost, dlock itself was
// signalled (forwarded), or the child outlived its grace after SIGTERM (kill-after).

import type { ChildHandle } from './spawn.js';
import type { Logger } from '../log.js';
import { now } from '../clock.js';

export type SignalReason = 'lost' | 'forwarded' | 'kill-after' | 'max-hold' | 'heartbeat-missed';

const WHY: Record<SignalReason, string> = {
  lost: 'the lock was lost',
  forwarded: 'dlock received it',
  'kill-after': 'it was still running after its grace',
  'max-hold': 'the lock was held for its --max-hold',
  'heartbeat-missed': 'no heartbeat came within --heartbeat',
};

export class ChildSignals {
  private timer: NodeJS.Timeout | undefined;
  private due = Infinity;

  constructor(
    private readonly child: ChildHandle,
    private readonly log: Logger,
    private readonly lock: { key: string; fence?: string },
    /** The longest grace before SIGKILL (--kill-after, capped at ttl/3). */
    private readonly maxGraceMs: number,
  ) {}

  /** Signal the child first, then log it: a slow stderr never delays a kill. */
  send(signal: NodeJS.Signals, reason: SignalReason): void {
    this.child.kill(signal);
    const why = WHY[reason];
    this.log.event(
      'signal',
      { ...this.lock, signal, reason, pid: this.child.pid },
      `sent ${signal} to the command (pid ${this.child.pid}): ${why}`,
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
    this.timer = setTimeout(() => {
      this.send('SIGKILL', 'kill-after');
      const lateMs = Math.round(now() - at);
      if (lateMs > stallNoticeMs) {
        this.log.event(
          'stalled',
          { ...this.lock, late_ms: lateMs },
          `dlock itself was stalled: its SIGKILL timer fired ${lateMs}ms late, past the moment the command had to ` +
            'be gone; it may have run past the lease',
        );
      }
    }, at - now());
  }

  cancel(): void {
    clearTimeout(this.timer);
  }
}
