// The child while a lock is held for it: signals dlock receives are forwarded (a terminating
// one followed by SIGKILL after --kill-after), and a lost lock stops it as --on-lost says. It is
// over when the last process of the command is gone, not only the first (./child-signals.ts).

import type { OnLost } from '../config/index.js';
import type { LossReason } from '../hold/lease.js';
import type { Logger } from '../log.js';
import type { BoundReason, JobBounds } from '../bounds/bounds.js';
import { logBoundExceeded } from '../bounds/event.js';
import { ChildSignals } from './child-signals.js';
import { lossResponse, respondToLoss, type LossResponse } from './loss.js';
import type { SignalRelay } from './signal-relay.js';
import type { ChildHandle } from './spawn.js';

export interface Supervision {
  log: Logger;
  /** What the log lines name: the lock's key and fence. */
  lock: { key: string; fence: string };
  onLost: OnLost;
  /** The longest grace between SIGTERM and SIGKILL (--kill-after, capped at ttl/3). */
  killAfterMs: number;
  /** --signal: what stops the child for a lost lock (--on-lost term) or a bound; SIGTERM by default. */
  stopSignal?: NodeJS.Signals;
  /** The lock's TTL: past its scheduling margin a late SIGKILL may come after the lease ended. */
  ttlMs: number;
  /** --max-hold and --heartbeat: once exceeded the child is stopped (SIGTERM, SIGKILL after the grace). */
  bounds?: JobBounds;
  /** A nested run under the lock its calling dlock holds: its bound events say so (reentrant: true). */
  reentrant?: boolean;
  /**
   * The owner token of the lock held for the command: the child is over once every process of the
   * command is gone (they carry it as DLOCK_TOKEN), and stopped with it meanwhile. Without one (a
   * nested run: its caller holds the lock and waits for them) the first process's exit ends it.
   */
  token?: string;
}

/** Resolves to the child's exit status once it is gone. */
export async function superviseChild(
  child: ChildHandle,
  signals: SignalRelay,
  lost: AbortSignal,
  options: Supervision,
): Promise<number> {
  const { log, lock, killAfterMs, token } = options;
  const mark = token === undefined ? undefined : `DLOCK_TOKEN=${token}`;
  const toChild = new ChildSignals(child, log, lock, killAfterMs, 'the command', mark);
  const forward = (signal: NodeJS.Signals, terminating: boolean) => {
    toChild.send(signal, 'forwarded');
    if (terminating) toChild.killLater(killAfterMs);
  };
  signals.forwardTo(forward);
  // One that came while the child was being spawned was taken as "interrupted": pass it on.
  if (signals.interrupted.aborted) forward(signals.interrupted.reason as NodeJS.Signals, true);
  const onLost = () => stopOnLoss(toChild, lost.reason as LossReason, options);
  // Lost while the child was being spawned: the event has fired already.
  if (lost.aborted) onLost();
  else lost.addEventListener('abort', onLost, { once: true });
  const { bounds } = options;
  // A lost lock has stopped the child already: the bound adds nothing.
  const onBound = () => {
    if (!lost.aborted) stopOnBound(toChild, bounds!.reason!, options);
  };
  bounds?.exceeded.addEventListener('abort', onBound, { once: true });
  let status: number | undefined;
  try {
    status = await child.exited;
    return status;
  } finally {
    // What it started and left running (stopped, or in the background: with a token) is gone, or
    // SIGKILLed, before the release; a lost lock or a bound meanwhile stops it as it stops the command.
    await toChild.finish(status);
    bounds?.exceeded.removeEventListener('abort', onBound);
  }
}

/** A bound is exceeded (--max-hold, --heartbeat): say so, stop the command (--signal), SIGKILL it after the grace. */
function stopOnBound(
  toChild: ChildSignals,
  reason: BoundReason,
  { log, lock, killAfterMs, reentrant, stopSignal = 'SIGTERM' }: Supervision,
): void {
  logBoundExceeded(log, reason, lock, 'stopping the command', {}, reentrant);
  toChild.send(stopSignal, reason.kind);
  toChild.killLater(killAfterMs);
}

/** Say the lock is lost and what happens to the command, then do it (--on-lost, ./loss.ts). */
function stopOnLoss(
  toChild: ChildSignals,
  reason: LossReason,
  { log, lock, onLost, ttlMs, stopSignal }: Supervision,
): void {
  const { key, fence } = lock;
  const response = lossResponse(onLost, reason, stopSignal);
  const late = reason.lateMs === undefined ? {} : { late_ms: Math.round(reason.lateMs) };
  log.event(
    'lost',
    { key, fence, reason: reason.kind, ...late },
    `lost ${key} (fence ${fence}): ${reason.message}; ${lossText(response.signal)}`,
  );
  respondToLoss(toChild, response, reason, ttlMs);
}

function lossText(signal: LossResponse['signal']): string {
  return signal === undefined
    ? 'the command keeps running unprotected (--on-lost ignore)'
    : signal === 'SIGKILL'
      ? 'killing the command'
      : signal === 'SIGTERM'
        ? 'terminating the command'
        : `sending ${signal} to the command`;
}
