// Watching the job's bounds while it holds the lock: --max-hold (held that long) and --heartbeat
// (that long without a `dlock heartbeat`, counted from the command's start, then from the last
// heartbeat). Either aborts `exceeded` with its BoundReason; the caller stops the job as for a
// lost lock and releases (docs/reference/exit-codes.md: 124), or, a nested run under its calling
// dlock's lock, stops its command and leaves the lock to that dlock. Monotonic time only.

import { longTimeout, now, type LongTimer } from '../clock.js';
import type { HeartbeatFile } from './heartbeat-file.js';

export const BOUND_EXIT = 124;

export type BoundReason =
  | { kind: 'max-hold'; heldMs: number; maxHoldMs: number }
  | { kind: 'heartbeat-missed'; sinceMs: number; heartbeatMs: number };

export interface BoundsInput {
  maxHoldMs: number | undefined;
  heartbeatMs: number | undefined;
  /** Monotonic ms since when the lock is held (the start of the acquiring round; a nested run: its command's start). */
  heldSince: number;
  /** Watched for --heartbeat. */
  heartbeat: HeartbeatFile | undefined;
}

export class JobBounds {
  private readonly controller = new AbortController();
  /** Aborts with a BoundReason once a bound is exceeded. */
  readonly exceeded: AbortSignal = this.controller.signal;
  private maxHoldTimer: LongTimer | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  /** Monotonic ms of the last heartbeat, or of the start of the watch (the command's start). */
  private lastBeat = now();

  constructor(private readonly input: BoundsInput) {
    const { maxHoldMs, heartbeatMs, heldSince, heartbeat } = input;
    if (maxHoldMs !== undefined) {
      this.maxHoldTimer = longTimeout(
        () => this.exceed({ kind: 'max-hold', heldMs: Math.round(now() - heldSince), maxHoldMs }),
        Math.max(0, heldSince + maxHoldMs - now()),
      );
    }
    if (heartbeatMs !== undefined && heartbeat) this.pollTimer = setInterval(() => this.poll(), pollEvery(heartbeatMs));
  }

  /** Monotonic ms of the last heartbeat (or of the command's start when none came yet). */
  get lastHeartbeat(): number {
    if (this.input.heartbeat?.touched()) this.lastBeat = now();
    return this.lastBeat;
  }

  /** What status shows of the job: its --max-hold, and how long ago it last heartbeat (monotonic ms). */
  progress(): { maxHoldMs?: number; beatAgeMs?: number } {
    const { maxHoldMs, heartbeat } = this.input;
    return { maxHoldMs, beatAgeMs: heartbeat ? now() - this.lastHeartbeat : undefined };
  }

  /** The reason, once `exceeded` has aborted. */
  get reason(): BoundReason | undefined {
    return this.exceeded.aborted ? (this.exceeded.reason as BoundReason) : undefined;
  }

  stop(): void {
    this.maxHoldTimer?.clear();
    clearInterval(this.pollTimer);
  }

  private poll(): void {
    const heartbeatMs = this.input.heartbeatMs!;
    const sinceMs = now() - this.lastHeartbeat;
    if (sinceMs >= heartbeatMs) this.exceed({ kind: 'heartbeat-missed', sinceMs: Math.round(sinceMs), heartbeatMs });
  }

  private exceed(reason: BoundReason): void {
    this.stop();
    if (!this.exceeded.aborted) this.controller.abort(reason);
  }
}

/** How often the heartbeat file is looked at: a tenth of --heartbeat, from 20ms to 500ms. */
function pollEvery(heartbeatMs: number): number {
  return Math.min(500, Math.max(20, Math.floor(heartbeatMs / 10)));
}
