// The lease: renew every ttl/3 while the child runs and report loss through an AbortSignal.
// A refused renewal means lost now. Failing renewals are retried until the local deadline
// (start of the last successful renewal + ttl - drift); loss is reported `graceMs` before it,
// so the child can be stopped before the server-side expiry.

import { extendAll } from './redlock/extend.js';
import type { InstanceFailure, LockSet } from './redlock/lockset.js';
import { localDeadline } from './redlock/quorum.js';
import { now } from './timeout.js';

export interface LossReason {
  kind: 'refused' | 'expiring';
  /** Monotonic ms at which our hold ends for sure; the child must be gone by then. */
  deadline: number;
  message: string;
}

export interface LeaseEvents {
  /** `failures`: instances that did not renew this time (a quorum did). */
  renewed?: (failures: InstanceFailure[]) => void;
  renewFailed?: (errors: string[]) => void;
}

export class Lease {
  private readonly controller = new AbortController();
  /** Aborts with a LossReason when the lock is lost. */
  readonly lost: AbortSignal = this.controller.signal;
  private deadline: number;
  private renewTimer: NodeJS.Timeout | undefined;
  private deadlineTimer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private stopped = false;
  /** When the last renewal round ended: no renewal of ours can have reached a server later. */
  private lastTouched = now();

  constructor(
    private readonly set: LockSet,
    startedAt: number,
    private readonly graceMs: number,
    private readonly events: LeaseEvents = {},
  ) {
    this.deadline = localDeadline(set.ttlMs, startedAt);
    this.armDeadline();
    this.scheduleRenewal(startedAt + this.renewEvery - now());
  }

  /**
   * Monotonic ms by which the lock expires on every server by itself: the TTL after the last
   * acquire or renewal round ended (a renewal whose reply was lost counts too: it may have run).
   * A server that was paused and runs a queued renewal after it resumes can push this out.
   */
  get expiresBy(): number {
    return this.lastTouched + this.set.ttlMs;
  }

  get renewEvery(): number {
    return Math.max(1, Math.floor(this.set.ttlMs / 3));
  }

  /** Stop renewing and wait for a renewal in flight, so a release cannot race it. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.renewTimer);
    clearTimeout(this.deadlineTimer);
    await this.inFlight;
  }

  private scheduleRenewal(delayMs: number): void {
    if (this.stopped) return;
    this.renewTimer = setTimeout(() => {
      this.inFlight = this.renew();
    }, Math.max(0, delayMs));
  }

  private async renew(): Promise<void> {
    const renewal = await extendAll(this.set);
    this.lastTouched = now();
    if (this.stopped || this.lost.aborted) return;
    if (renewal.kind === 'extended') {
      this.deadline = localDeadline(this.set.ttlMs, renewal.startedAt);
      this.armDeadline();
      this.events.renewed?.(renewal.failures);
      this.scheduleRenewal(renewal.startedAt + this.renewEvery - now());
    } else if (renewal.kind === 'refused') {
      this.lose('refused', 'renewal refused: the lock was deleted or taken over');
    } else {
      this.events.renewFailed?.(renewal.errors);
      this.scheduleRenewal(retryDelayMs(this.set.ttlMs));
    }
  }

  private armDeadline(): void {
    clearTimeout(this.deadlineTimer);
    this.deadlineTimer = setTimeout(
      () => this.lose('expiring', 'renewal failed until the lease was about to expire'),
      Math.max(0, this.deadline - this.graceMs - now()),
    );
  }

  private lose(kind: LossReason['kind'], message: string): void {
    if (this.lost.aborted) return;
    this.stopped = true;
    clearTimeout(this.renewTimer);
    clearTimeout(this.deadlineTimer);
    const reason: LossReason = { kind, deadline: kind === 'refused' ? now() + this.graceMs : this.deadline, message };
    this.controller.abort(reason);
  }
}

/** Pause between failed renewals: short next to the TTL, never a storm. */
export function retryDelayMs(ttlMs: number): number {
  return Math.min(1000, Math.max(20, Math.floor(ttlMs / 15)));
}
