export interface WaitOptions {
  /** Give up after this long (default 10 s). */
  timeoutMs?: number;
  /** Time between two checks (default 10 ms). */
  everyMs?: number;
}

/** Poll `check` until it returns a value (not undefined/false); a throw counts as "not yet". */
export function waitUntil<T>(
  what: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  options?: WaitOptions,
): Promise<T>;
