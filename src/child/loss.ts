// What a lost lock does to the process that ran under it, as --on-lost says: the same for `dlock
// run`'s command (./supervise.ts) and for the process an acquire's keeper watches
// (../keeper/keeper.ts). term: SIGTERM (or the --signal given), then SIGKILL once its grace is over
// (--kill-after, at most ttl/3, and never past the lease's kill deadline); kill: SIGKILL; ignore:
// nothing. A dlock whose own deadline timer fired past that deadline (it was stalled) has no grace
// left: SIGKILL at once.

import type { OnLost } from '../config/index.js';
import type { LossReason } from '../hold/lease.js';
import { schedulingMarginMs } from '../timing.js';
import { now } from '../clock.js';
import type { ChildSignals } from './child-signals.js';

export interface LossResponse {
  /** What is sent at once (--on-lost term: the --signal, SIGTERM by default); undefined with --on-lost ignore. */
  signal: NodeJS.Signals | undefined;
  /** The kill deadline passed while dlock was stalled: SIGKILL now, whatever --on-lost says (but ignore). */
  stalled: boolean;
}

/** The signal --on-lost names (term: `stop`, the --signal); undefined for ignore. */
export function onLostSignal(onLost: OnLost, stop: NodeJS.Signals = 'SIGTERM'): NodeJS.Signals | undefined {
  return onLost === 'kill' ? 'SIGKILL' : onLost === 'term' ? stop : undefined;
}

/** What to send for `reason`, decided before it is done: the `lost` event says it first. */
export function lossResponse(onLost: OnLost, reason: LossReason, stop: NodeJS.Signals = 'SIGTERM'): LossResponse {
  const stalled = reason.kind === 'expiring' && reason.deadline - now() <= 0 && onLost !== 'ignore';
  return { signal: stalled ? 'SIGKILL' : onLostSignal(onLost, stop), stalled };
}

/** Do what `response` says to the process; after SIGTERM (or the --signal), SIGKILL when its grace ends. */
export function respondToLoss(
  target: ChildSignals,
  { signal, stalled }: LossResponse,
  reason: LossReason,
  ttlMs: number,
): void {
  if (stalled) target.killStalled(reason.lateMs);
  else if (signal === 'SIGKILL') target.send('SIGKILL', 'lost');
  else if (signal !== undefined) {
    target.send(signal, 'lost');
    // Past the scheduling margin a late SIGKILL may come after the lease ended: say so.
    target.killLater(reason.deadline - now(), reason.kind === 'expiring' ? schedulingMarginMs(ttlMs) : Infinity);
  }
}
