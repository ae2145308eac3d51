// --max-hold and --heartbeat (run, acquire): how long the job may hold the lock, and how long it
// may go without a `dlock heartbeat`, before it is stopped and the lock released (exit 124).

import { badOption } from '../errors.js';
import { formatDuration, parseDuration } from '../duration.js';
import { positiveDuration, type Env, type RawOptions } from './options.js';
import { stopSignal } from './signal.js';

/** The shortest --heartbeat: below it the polling of the heartbeat file would cost more than it tells. */
export const MIN_HEARTBEAT_MS = 100;

export interface JobBounds {
  /** --max-hold in ms; undefined: no bound. */
  maxHoldMs: number | undefined;
  /** --heartbeat in ms; undefined: no heartbeat is asked for. */
  heartbeatMs: number | undefined;
}

/**
 * --max-hold (env DLOCK_MAX_HOLD) and --heartbeat (env DLOCK_HEARTBEAT), each more than zero; a
 * --max-hold longer than a --kill-after given with it (a bound shorter than the grace between
 * the --signal and SIGKILL is a mistake), and a --heartbeat of at least MIN_HEARTBEAT_MS. An empty env
 * value counts as unset.
 */
export function jobBounds(raw: RawOptions, env: Env): JobBounds {
  const maxHold = given(raw.maxHold, '--max-hold', env.DLOCK_MAX_HOLD, 'DLOCK_MAX_HOLD');
  const heartbeat = given(raw.heartbeat, '--heartbeat', env.DLOCK_HEARTBEAT, 'DLOCK_HEARTBEAT');
  let maxHoldMs: number | undefined;
  if (maxHold) {
    maxHoldMs = positiveDuration(maxHold.option, maxHold.value);
    const killAfterMs = raw.killAfter === undefined ? undefined : parseDuration(raw.killAfter);
    if (killAfterMs !== undefined && maxHoldMs <= killAfterMs) {
      const stop = stopSignal(raw.signal);
      const grace = `--kill-after (${formatDuration(killAfterMs)}), the grace between ${stop} and SIGKILL`;
      throw badOption(maxHold.option, maxHold.value, `must be longer than ${grace}`);
    }
  }
  let heartbeatMs: number | undefined;
  if (heartbeat) {
    heartbeatMs = positiveDuration(heartbeat.option, heartbeat.value);
    if (heartbeatMs < MIN_HEARTBEAT_MS)
      throw badOption(heartbeat.option, heartbeat.value, `must be at least ${MIN_HEARTBEAT_MS}ms`);
  }
  return { maxHoldMs, heartbeatMs };
}

function given(
  value: string | undefined,
  option: string,
  envValue: string | undefined,
  envName: string,
): { option: string; value: string } | undefined {
  if (value !== undefined) return { option, value };
  if (envValue !== undefined && envValue !== '') return { option: envName, value: envValue };
  return undefined;
}
