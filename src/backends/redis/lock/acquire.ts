// Single-instance acquire: one ACQUIRE script call on one Redis.

import { defineScript } from './define-script.js';
import type { LockKeys } from './keys.js';
import { parseAcquireReply } from './replies.js';
import { ACQUIRE, COMMON_CALLS } from './scripts.js';
import { type HolderMeta } from '../../../backend/holder.js';

export type { AcquireReply } from './replies.js';

export interface AcquireInput {
  owner: string;
  ttlMs: number;
  meta: HolderMeta;
}

/**
 * lua/acquire.lua: take the lock if it is free (or ours already); `since_ms` is the server's time.
 * Not acquired: `owner` is the holder's token ("" for a key dlock did not write).
 */
export const acquireScript = defineScript({
  name: 'acquire',
  lua: ACQUIRE,
  commands: [...COMMON_CALLS, 'HGET', 'EXISTS', 'PTTL', 'INCR'],
  keys: (k: LockKeys) => [k.lock, k.fence],
  args: (i: AcquireInput) => [i.owner, i.ttlMs, i.meta.host, i.meta.pid, i.meta.cmd],
  parse: parseAcquireReply,
});
