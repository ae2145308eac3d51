// Read a lock's state on one instance without changing it (status, spinner, reentrancy).

import type { Instance } from '../redis/client.js';
import { withTimeout } from '../timeout.js';
import type { Holder } from './holder.js';
import type { LockKeys } from './keys.js';
import { parseForceReleaseReply, parseInspectReply } from './replies.js';
import { runScript } from './script.js';
import { FORCE_RELEASE, INSPECT } from './scripts.js';

export interface LockState {
  holder: Holder | undefined;
  pttlMs: number;
  /** The fence counter's value (the last token issued here), "0" if none yet. */
  counter: string;
}

export async function inspectOn(instance: Instance, keys: LockKeys, timeoutMs: number): Promise<LockState> {
  return parseInspectReply(await withTimeout(runScript(instance.client, INSPECT, [keys.lock, keys.fence], []), timeoutMs));
}

/**
 * Take the lock from whoever holds it; returns whom it removed. `now`: delete it; else keep
 * it closed until the removed holder's lease runs out (see FORCE_RELEASE).
 */
export async function forceReleaseOn(instance: Instance, keys: LockKeys, timeoutMs: number, now: boolean): Promise<{ holder?: Holder; closedForMs: number }> {
  return parseForceReleaseReply(await withTimeout(runScript(instance.client, FORCE_RELEASE, [keys.lock, keys.released], [now ? 'now' : 'close', Date.now()]), timeoutMs));
}
