// A bound of an acquire section exceeded (--max-hold, --heartbeat): the keeper stops the watched
// process as run stops its command (SIGTERM, SIGKILL after the grace), before it releases. The
// keeper is not the process's parent: it cannot set the shell's exit status (124), only signal it.

import type { BoundReason } from '../bounds/bounds.js';
import { logBoundExceeded } from '../bounds/event.js';
import type { AcquireConfig } from '../config/index.js';
import type { KeeperLogger } from './log.js';

interface Stopping {
  config: Pick<AcquireConfig, 'key' | 'killAfterMs'>;
  fence: string;
  log: KeeperLogger;
}

/** Say why, SIGTERM `pid`, and SIGKILL it if it has not exited (`gone`) after the grace. */
export async function stopWatched(
  pid: number,
  gone: AbortSignal,
  reason: BoundReason,
  { config, fence, log }: Stopping,
): Promise<void> {
  logBoundExceeded(log, reason, { key: config.key, fence }, `stopping pid ${pid} (SIGTERM)`, { pid });
  if (!send(pid, 'SIGTERM') || gone.aborted) return;
  const exited = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), config.killAfterMs);
    gone.addEventListener('abort', () => (clearTimeout(timer), resolve(true)), { once: true });
  });
  if (!exited) send(pid, 'SIGKILL');
}

function send(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(pid, signal);
    return true;
  } catch {
    return false; // gone already
  }
}
