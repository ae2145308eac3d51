// A bound of an acquire section exceeded (--max-hold, --heartbeat): the keeper stops the watched
// process (and what it started, its background steps once it is gone: ./section.ts) as run stops
// its command (SIGTERM, SIGKILL when the grace ends), before it releases. The keeper is not the
// process's parent: it cannot make the shell exit 124, only signal it.

import type { BoundReason } from '../bounds/bounds.js';
import { logBoundExceeded } from '../bounds/event.js';
import type { ChildSignals } from '../child/child-signals.js';
import type { AcquireConfig } from '../config/index.js';
import type { KeeperLogger } from './log.js';

/** Say why, SIGTERM (or the --signal) the section (`watched`: pid `pid`'s), SIGKILL it after the grace. */
export function stopForBound(
  watched: ChildSignals,
  config: Pick<AcquireConfig, 'key' | 'killAfterMs' | 'stopSignal'>,
  pid: number,
  fence: string,
  reason: BoundReason,
  log: KeeperLogger,
): void {
  const signal = config.stopSignal;
  logBoundExceeded(log, reason, { key: config.key, fence }, `stopping pid ${pid} (${signal})`, { pid });
  watched.send(signal, reason.kind);
  watched.killLater(config.killAfterMs);
}
