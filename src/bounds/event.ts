// What dlock says when a bound is exceeded: the `max-hold` or `heartbeat-missed` event (JSON
// fields as docs/reference/json-events.md lists them) and its text line.
// A nested run (under the lock its calling dlock holds) says `reentrant: true`, counts from its
// command's start, and does not release: the calling dlock keeps the lock.

import { formatDuration } from '../duration.js';
import type { Logger } from '../log.js';
import type { BoundReason } from './bounds.js';

/**
 * Log the exceeded bound; `stopping` says what happens to the job (e.g. "stopping the command").
 * `reentrant`: a nested run's bound (it does not release the lock).
 */
export function logBoundExceeded(
  log: Pick<Logger, 'event'>,
  reason: BoundReason,
  lock: { key: string; fence: string },
  stopping: string,
  more: Record<string, unknown> = {},
  reentrant = false,
): void {
  const { key, fence } = lock;
  const nested = reentrant ? { reentrant: true } : {};
  const then = reentrant ? '; the calling dlock keeps holding the lock' : ', then releasing it';
  if (reason.kind === 'max-hold') {
    const held = reentrant ? `ran under ${key} (fence ${fence})` : `held ${key} (fence ${fence})`;
    log.event(
      'max-hold',
      { key, fence, held_ms: reason.heldMs, max_hold_ms: reason.maxHoldMs, ...more, ...nested },
      `${held} for ${formatDuration(reason.heldMs)}, its --max-hold ` +
        `${formatDuration(reason.maxHoldMs)}: ${stopping}${then}`,
    );
  } else {
    log.event(
      'heartbeat-missed',
      { key, fence, since_ms: reason.sinceMs, heartbeat_ms: reason.heartbeatMs, ...more, ...nested },
      `no heartbeat for ${key} (fence ${fence}) for ${formatDuration(reason.sinceMs)} (--heartbeat ` +
        `${formatDuration(reason.heartbeatMs)}): ${stopping}${then}`,
    );
  }
}
