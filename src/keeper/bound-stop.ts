// A bound of an acquire section exceeded (--max-hold, --heartbeat): the keeper stops the watched
// process as run stops its command (SIGTERM, SIGKILL when the grace ends), before it releases.
// The keeper is not the process's parent: it cannot make the shell exit 124, only signal it.

import type { BoundReason } from '../bounds/bounds.js';
import { logBoundExceeded } from '../bounds/event.js';
import { ChildSignals, processTarget } from '../child/child-signals.js';
import type { AcquireConfig } from '../config/index.js';
import type { KeeperLogger } from './log.js';

/** Say why, SIGTERM `pid`, SIGKILL it after the grace; `settled()` of the result resolves once no SIGKILL is due. */
export function stopForBound(
  config: Pick<AcquireConfig, 'key' | 'killAfterMs'>,
  pid: number,
  fence: string,
  reason: BoundReason,
  log: KeeperLogger,
): ChildSignals {
  const lock = { key: config.key, fence };
  logBoundExceeded(log, reason, lock, `stopping pid ${pid} (SIGTERM)`, { pid });
  const watched = new ChildSignals(processTarget(pid), log, lock, config.killAfterMs, 'the watched process');
  watched.send('SIGTERM', reason.kind);
  watched.killLater(config.killAfterMs);
  return watched;
}
