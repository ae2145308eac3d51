// Redlock renewal: re-take the lock on an instance that lost it while a majority holds it.

import { now } from '../../../clock.js';
import { defineScript } from './define-script.js';
import type { LockKeys } from './keys.js';
import { COMMON_CALLS, RETAKE } from './scripts.js';
import { type HolderMeta } from '../../../backend/holder.js';

/** What a re-created hash carries: the held token and the holder's metadata. */
export interface HeldLock {
  fence: string;
  meta: HolderMeta;
  /**
   * Monotonic ms (clock.ts `now()`) when the lock was acquired: the script stamps `since_ms` as
   * the server's time less how long it has been held.
   */
  startedAt: number;
}

export interface RetakeInput {
  owner: string;
  /** What is left of the lease the majority just renewed. */
  leftMs: number;
  /** The lease length (the hash's `ttl_ms`). */
  ttlMs: number;
  held: HeldLock;
}

/**
 * lua/retake.lua: put our lock back where it was lost. true: ours there now; false: someone else's
 * key is there (left alone). Throws on errors.
 */
export const retakeScript = defineScript({
  name: 'retake',
  lua: RETAKE,
  commands: [...COMMON_CALLS, 'HGET', 'EXISTS'],
  keys: (k: LockKeys) => [k.lock, k.fence],
  args: ({ owner, leftMs, ttlMs, held }: RetakeInput) => [
    owner,
    Math.max(1, Math.floor(leftMs)),
    held.fence,
    held.meta.host,
    held.meta.pid,
    held.meta.cmd,
    Math.max(0, Math.round(now() - held.startedAt)),
    ttlMs,
  ],
  // Anything but 1 is "not ours there" (the caller counts it as a lost instance).
  parse: (reply) => reply === 1,
});
