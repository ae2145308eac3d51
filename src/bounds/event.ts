// What dlock says when a bound is exceeded: the `max-hold` or `heartbeat-missed` event (JSON
// fields as docs/reference/json-events.md lists them) and its text line.

import { formatDuration } from '../duration.js';
import type { Logger } from '../log.js';
import type { BoundReason } from './bounds.js';

/** Log the exceeded bound; `stopping` says what happens to the job (e.g. "stopping the command"). */
export function logBoundExceeded(
  log: Pick<Logger, 'event'>,
  reason: BoundReason,
  lock: { key: string; fence: string },
  stopping: string,
  more: Record<string, unknown> = {},
): void {
  const { key, fence } = lock;
  if (reason.kind === 'max-hold') {
    log.event(
      'max-hold',
      { key, fence, held_ms: reason.heldMs, max_hold_ms: reason.maxHoldMs, ...more },
      `held ${key} (fence ${fence}) for ${formatDuration(reason.heldMs)}, its --max-hold ` +
        `${formatDuration(reason.maxHoldMs)}: ${stopping}, then releasing it`,
    );
  } else {
    log.event(
      'heartbeat-missed',
      { key, fence, since_ms: reason.sinceMs, heartbeat_ms: reason.heartbeatMs, ...more },
      `no heartbeat for ${key} (fence ${fence}) for ${formatDuration(reason.sinceMs)} (--heartbeat ` +
        `${formatDuration(reason.heartbeatMs)}): ${stopping}, then releasing it`,
    );
  }
}
