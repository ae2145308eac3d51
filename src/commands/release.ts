// dlock release <key>: the owner's release, by token (../hold/by-token.ts), after its keeper on
// this host has stopped renewing (../keeper/stop.ts); a nested section's releases nothing.
// dlock release --force <key>: the operator's escape hatch. Takes the lock from whoever holds
// it and says whom it removed. The key stays closed to new holders until the removed holder's
// lease runs out, so its command is stopped (its dlock's next renewal is refused) before
// anyone else's starts, as consul's lock-delay does; --now deletes it at once. The fence
// counter stays, so tokens keep increasing.

import { formatDuration } from '../duration.js';
import type { ConnectionConfig, Releaser } from '../config/index.js';
import { LockLostError } from '../errors.js';
import { failureText, isClosed, openBackend, storeNow, unavailable } from '../backend/index.js';
import { Logger } from '../log.js';
import { stdout, type Output } from '../output.js';
import { printable } from '../untrusted.js';
import { releaseAsOwner, releaseNested } from '../hold/by-token.js';
import { endedMark, markEnded } from '../keeper/ended.js';
import { stopKeeper } from '../keeper/stop.js';
import { describeHolder } from '../views/holder-text.js';
import { publicHolder } from '../views/instance-views.js';

export async function release(
  config: ConnectionConfig,
  key: string,
  options: Releaser & { now?: boolean; slot?: number; nested?: boolean; exitStatus?: string },
  out: Output = stdout,
): Promise<number> {
  const log = new Logger(config.verbosity, config.logFormat);
  if (!options.force) {
    // Its token is there: config/owner.ts (releaseConfig) refuses an owner's release without one.
    const token = options.token;
    if (options.nested) return releaseNested(config, key, token, log);
    // The section's status ("unknown" without --exit-status), for the history and its keeper's pings and hooks.
    const { exitStatus } = options;
    const stopRenewing = () => stopKeeper(token, config.connectTimeoutMs + 1_000, exitStatus);
    return releaseAndMark(() => releaseAsOwner(config, key, token, log, stopRenewing, exitStatus ?? 'unknown'), {
      key,
      token,
      log,
    });
  }
  const backend = await openBackend(config);
  try {
    const { removed, failed } = await backend.lock(key).forceRelease(Boolean(options.now), options.slot);
    // Nothing removed: the error alone says why. Else an instance we could not reach may still
    // hold the lock: say so.
    if (removed.length === 0 && failed.length > 0) throw unavailable(backend.caps, failed);
    for (const failure of failed.map(failureText))
      log.warn(`release --force: ${key} not released on ${failure}`, { event: 'not-released', key, error: failure });
    if (removed.length === 0) {
      out.write(
        `${key}: ${options.slot === undefined ? 'not held' : `slot ${options.slot} not held`}; nothing released\n`,
      );
      return 1;
    }
    for (const holder of removed) {
      const held = describeHolder(holder, undefined, storeNow(holder.clock));
      const command = holder.cmd ? ` (command: ${printable(holder.cmd)})` : '';
      const what = isClosed(holder) ? held : `released the lock ${held}${command}`;
      const text = `${key}: ${what}${closedText(holder.closedForMs, Boolean(options.now))}`;
      out.write(`${text}\n`);
      log.event(
        'force-released',
        {
          key,
          fence: holder.fence,
          holder: publicHolder(holder, undefined),
          closed_for_ms: options.now ? 0 : holder.closedForMs,
        },
        text,
      );
    }
    return 0;
  } finally {
    backend.close();
  }
}

function closedText(closedForMs: number, now: boolean): string {
  if (now) return '; open to new holders now';
  if (closedForMs <= 0) return '';
  return (
    `; closed to new holders for ${formatDuration(closedForMs)} more, until that lease runs out (--now opens ` +
    'it at once)'
  );
}

/**
 * The owner's release, marked on this host as the end of the section (../keeper/ended.ts). Not
 * held any more because this owner released it already (a trap's release after an explicit one):
 * 0, nothing to do. Not held otherwise: 76, as before.
 */
async function releaseAndMark(
  releaseIt: () => Promise<number>,
  { key, token, log }: { key: string; token: string; log: Logger },
): Promise<number> {
  const before = endedMark(key, token);
  try {
    const code = await releaseIt();
    markEnded(key, token, 'released');
    return code;
  } catch (error) {
    if (!(error instanceof LockLostError)) throw error;
    if (before === 'released') {
      log.event('released', { key, released: false, already: true }, `${key} was released already by this owner`);
      return 0;
    }
    markEnded(key, token, 'not-held');
    throw error;
  }
}
