// Bounded waits: no Redis call of dlock's may hang, whatever the server does.

export class TimeoutError extends Error {
  constructor(readonly ms: number) {
    super(`timed out after ${ms}ms`);
  }
}

/** The longest delay setTimeout takes (2^31−1 ms, 24.8 days): past it, Node fires after 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** A timer of any length (longTimeout). */
export interface LongTimer {
  clear(): void;
  /** Let the process exit while it is pending. */
  unref(): LongTimer;
}

/**
 * setTimeout for any delay: one past MAX_TIMER_MS is run as a chain of timers of at most `chunkMs`
 * each (a --max-hold or --wait of 30d must not fire at once). Never early: Node's timers run on a
 * whole-millisecond loop clock and may fire up to 1 ms before `now()` says the delay is over (a
 * --max-hold 1s stop said held_ms 999), so a timer that comes early waits out the rest. `chunkMs`
 * is for tests.
 */
export function longTimeout(fn: () => void, ms: number, chunkMs = MAX_TIMER_MS): LongTimer {
  const due = now() + Math.max(0, ms);
  let timer: NodeJS.Timeout;
  let unref = false;
  const arm = (left: number) => {
    timer = setTimeout(fire, Math.min(Math.ceil(left), chunkMs));
    if (unref) timer.unref();
  };
  const fire = () => {
    const left = due - now();
    if (left > 0) arm(left);
    else fn();
  };
  arm(Math.max(0, ms));
  const handle: LongTimer = {
    clear: () => clearTimeout(timer),
    unref: () => ((unref = true), timer.unref(), handle),
  };
  return handle;
}

/** Reject with TimeoutError when `promise` has not settled within `ms`. */
export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: LongTimer | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = longTimeout(() => reject(new TimeoutError(ms)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => timer?.clear());
}

/** Resolve after `ms`, or at once when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      timer.clear();
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = longTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Milliseconds on a monotonic clock (never jumps with the wall clock). process.hrtime rather
 * than performance.now(): the first touch of `performance` loads ten perf_hooks modules.
 */
export const now = (): number => Number(process.hrtime.bigint()) / 1e6;

/**
 * Wall-clock epoch milliseconds with a sub-millisecond fraction (the `ts_ms` of every event):
 * the monotonic clock plus its offset to the wall clock, which never goes back. Date.now() is
 * whole milliseconds, so one reading of it fixes the offset only to within a millisecond, and
 * a process descheduled between its two clock readings would keep an offset that many
 * milliseconds wrong for its whole life (performance.timeOrigin has that flaw: 60 Node
 * processes started at once on 2 cores, one was 164 ms off). So every call reads both clocks,
 * wall first, and keeps the largest offset seen: a reading interrupted in between comes out
 * smaller and is ignored, and the offset closes in on the truth from below. The result is
 * never before Date.now() and never after the true time.
 */
let epochAtZero = -Infinity;
export function epochMs(): number {
  const wall = Date.now();
  const mono = now();
  if (wall - mono > epochAtZero) epochAtZero = wall - mono;
  return epochAtZero + mono;
}
epochMs();
