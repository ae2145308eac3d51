// The lease: renew every ttl/3 while the child runs and report loss through an AbortSignal.
// A refused renewal means lost now. Failing renewals are retried until the local deadline
// (start of the last successful renewal + ttl - drift). The child must be gone a scheduling
// margin before it (the kill deadline: a loaded machine fires timers late), and loss is
// reported `graceMs` before that, so the child can be stopped before the server-side expiry.

import type { HolderProgress, LockHandle, MemberFailure } from '../backend/index.js';
import { killDeadline, localDeadline } from '../timing.js';
import { longTimeout, now, type LongTimer } from '../clock.js';

export interface LossReason {
  kind: 'refused' | 'expiring';
  /** Monotonic ms by which the child must be gone (SIGKILL then at the latest). */
  deadline: number;
  message: string;
  /** How late the lease's own timer fired (an event-loop stall), when it did. */
  lateMs?: number;
}

export interface LeaseEvents {
  /** `failures`: members that did not renew this time (a quorum did); `retaken`: members that hold it again. */
  renewed?: (failures: MemberFailure[], retaken: string[]) => void;
  renewFailed?: (errors: string[]) => void;
}

export class Lease {
  private readonly controller = new AbortController();
  /** Aborts with a LossReason when the lock is lost. */
  readonly lost: AbortSignal = this.controller.signal;
  /** Monotonic ms by which the child must be gone unless renewed. */
  private deadline: number;
  /** When the last successful acquire or renewal round started. */
  private renewedAt: number;
  private renewTimer: LongTimer | undefined;
  private deadlineTimer: LongTimer | undefined;
  private inFlight: Promise<void> | undefined;
  /** Monotonic ms at which the renewal in flight was sent (undefined when none is). */
  private renewingSince: number | undefined;
  private stopped = false;
  /** When the last renewal round ended: no renewal of ours can have reached a server later. */
  private lastTouched = now();

  /** What each renewal stores about the job for status (--max-hold, the last heartbeat). */
  progress: (() => HolderProgress) | undefined;

  constructor(
    private readonly lock: LockHandle,
    startedAt: number,
    private readonly graceMs: number,
    private readonly events: LeaseEvents = {},
  ) {
    this.renewedAt = startedAt;
    this.deadline = killDeadline(lock.ttlMs, startedAt);
    this.armDeadline();
    this.scheduleRenewal(startedAt + this.renewEvery - now());
  }

  /**
   * Monotonic ms by which the lock expires on every server by itself: the TTL after the last
   * acquire or renewal round ended (a renewal whose reply was lost counts too: it may have run).
   * A server that was paused and runs a queued renewal after it resumes can push this out.
   */
  get expiresBy(): number {
    return this.lastTouched + this.lock.ttlMs;
  }

  /** Monotonic ms at which the lease ends unless renewed: the last success + ttl − drift. */
  get endsAt(): number {
    return localDeadline(this.lock.ttlMs, this.renewedAt);
  }

  /** The lease length it renews to. */
  get ttlMs(): number {
    return this.lock.ttlMs;
  }

  get renewEvery(): number {
    return Math.max(1, Math.floor(this.lock.ttlMs / 3));
  }

  /** When the lease gives up unless renewed: the kill deadline less the grace for SIGTERM. */
  private get givesUpAt(): number {
    return this.deadline - this.graceMs;
  }

  /** Stop renewing and wait for a renewal in flight, so a release cannot race it. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.renewTimer?.clear();
    this.deadlineTimer?.clear();
    await this.inFlight;
  }

  private scheduleRenewal(delayMs: number): void {
    if (this.stopped) return;
    this.renewTimer = longTimeout(
      () => {
        this.renewingSince = now();
        this.inFlight = this.renew().finally(() => (this.renewingSince = undefined));
      },
      Math.max(0, delayMs),
    );
  }

  private async renew(): Promise<void> {
    const progress = this.progress?.();
    const renewal = await this.lock.extend({ givesUpAt: this.givesUpAt, progress });
    this.lastTouched = now();
    if (this.stopped || this.lost.aborted) return;
    if (renewal.kind === 'extended') {
      this.renewedAt = renewal.startedAt;
      this.deadline = killDeadline(this.lock.ttlMs, renewal.startedAt);
      this.armDeadline();
      this.events.renewed?.(renewal.failures, renewal.retaken);
      this.scheduleRenewal(renewal.startedAt + this.renewEvery - now());
    } else if (renewal.kind === 'refused') {
      this.lose('refused', 'renewal refused: the lock was deleted or taken over');
    } else {
      this.events.renewFailed?.(renewal.errors);
      this.scheduleRenewal(renewalRetryMs(this.lock.ttlMs));
    }
  }

  private armDeadline(): void {
    this.deadlineTimer?.clear();
    const due = this.givesUpAt;
    this.deadlineTimer = longTimeout(
      () => {
        // A timer that fires well after it was due means dlock itself was stalled (a loaded
        // machine, a pause): the run says so, and kills at once when the deadline has passed.
        const lateMs = now() - due;
        // A renewal that hangs is still waiting here: it was given a few ms past now (renewTimeoutMs).
        const waiting =
          this.renewingSince === undefined
            ? ''
            : ` (${this.lock.caps.total > 1 ? 'no quorum' : `${this.lock.caps.store} has not`} answered ` +
              `the renewal sent ${Math.round(now() - this.renewingSince)}ms ago)`;
        this.lose('expiring', `renewal failed until the lease was about to expire${waiting}`, lateMs);
      },
      Math.max(0, due - now()),
    );
  }

  private lose(kind: LossReason['kind'], message: string, lateMs?: number): void {
    if (this.lost.aborted) return;
    this.stopped = true;
    this.renewTimer?.clear();
    this.deadlineTimer?.clear();
    const reason: LossReason = {
      kind,
      deadline: kind === 'refused' ? now() + this.graceMs : this.deadline,
      message,
      ...(lateMs !== undefined ? { lateMs } : {}),
    };
    this.controller.abort(reason);
  }
}

/** Pause between failed renewals: short next to the TTL, never a storm. */
function renewalRetryMs(ttlMs: number): number {
  return Math.min(1000, Math.max(20, Math.floor(ttlMs / 15)));
}
