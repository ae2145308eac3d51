// Bounded waits: no Redis call of dlock's may hang, whatever the server does.

export class TimeoutError extends Error {
  constructor(readonly ms: number) {
    super(`timed out after ${ms}ms`);
  }
}

/** Reject with TimeoutError when `promise` has not settled within `ms`. */
export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(ms)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Resolve after `ms`, or at once when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, ms));
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Milliseconds on a monotonic clock (never jumps with the wall clock). process.hrtime rather
 * than performance.now(): the first touch of `performance` loads ten perf_hooks modules.
 */
export const now = (): number => Number(process.hrtime.bigint()) / 1e6;

/** Wall-clock epoch milliseconds with a sub-millisecond fraction, steady between calls. */
const epochAtZero = Date.now() - now();
export const epochMs = (): number => epochAtZero + now();
