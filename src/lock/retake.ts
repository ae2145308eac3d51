// Redlock renewal: re-take the lock on an instance that lost it while a majority holds it.

import type { Instance } from '../redis/client.js';
import { withTimeout } from '../clock.js';
import type { HolderMeta } from './acquire.js';
import type { LockKeys } from './keys.js';
import { runScript } from './script.js';
import { RETAKE } from './scripts.js';

/** What a re-created hash carries: the held token and the holder's metadata. */
export interface HeldLock {
  fence: string;
  meta: HolderMeta;
  /** Wall-clock ms when the lock was acquired (the hash's `since_ms`). */
  sinceMs: number;
}

/** true: ours there now; false: someone else's key is there (left alone). Throws on errors. */
export async function retakeOn(
  instance: Instance,
  keys: LockKeys,
  owner: string,
  leftMs: number,
  ttlMs: number,
  held: HeldLock,
  timeoutMs: number,
): Promise<boolean> {
  const { fence, meta, sinceMs } = held;
  const args = [
    owner,
    Math.max(1, Math.floor(leftMs)),
    fence,
    meta.host,
    meta.pid,
    meta.cmd,
    Math.round(sinceMs),
    ttlMs,
  ];
  return (await withTimeout(runScript(instance.client, RETAKE, [keys.lock, keys.fence], args), timeoutMs)) === 1;
}
