// Read a lock's state on one instance without changing it (status, spinner, reentrancy).

import { hostname } from 'node:os';
import type { Instance } from '../redis/client.js';
import { withTimeout } from '../clock.js';
import type { Holder } from './holder.js';
import { lineKeys, type LockKeys } from './keys.js';
import { PLACE_LEASE_MS } from './line.js';
import { parseForceReleaseReply, parseInspectReply, type InspectReply } from './replies.js';
import { runScript } from './script.js';
import { FORCE_RELEASE, INSPECT } from './scripts.js';

/** `holder`: the exclusive holder or the first of several; `counter`: the last token issued here ("0" if none yet). */
export type LockState = InspectReply;

export async function inspectOn(instance: Instance, keys: LockKeys, timeoutMs: number): Promise<LockState> {
  return parseInspectReply(
    await withTimeout(runScript(instance.client, INSPECT, lineKeys(keys, keys.fence), []), timeoutMs),
  );
}

/**
 * Take the lock from whoever holds it (with `slot`, only that holder of --slots); returns whom
 * it removed. `now`: delete; else keep each removed hold closed until its lease runs out (see
 * FORCE_RELEASE).
 */
export async function forceReleaseOn(
  instance: Instance,
  keys: LockKeys,
  timeoutMs: number,
  now: boolean,
  slot?: number,
): Promise<{ holders: Holder[]; closedForMs: number }> {
  // Who forced it goes into the history.
  const slotArg = slot === undefined ? '' : String(slot);
  const args = [now ? 'now' : 'close', Date.now(), slotArg, keys.wakePrefix, hostname(), process.pid, PLACE_LEASE_MS];
  return parseForceReleaseReply(
    await withTimeout(
      runScript(instance.client, FORCE_RELEASE, [...lineKeys(keys, keys.released), keys.history], args),
      timeoutMs,
    ),
  );
}
