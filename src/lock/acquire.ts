// Single-instance acquire: one ACQUIRE script call on one Redis.

import type { Instance } from '../redis/client.js';
import { withTimeout } from '../clock.js';
import type { LockKeys } from './keys.js';
import { parseAcquireReply, type AcquireReply } from './replies.js';
import { runScript } from './script.js';
import { ACQUIRE } from './scripts.js';

export type { AcquireReply } from './replies.js';

export interface HolderMeta {
  host: string;
  pid: number;
  cmd: string;
}

/** Not acquired: `owner` is the holder's token ("" for a key dlock did not write). */
export async function acquireOn(
  instance: Instance,
  keys: LockKeys,
  owner: string,
  ttlMs: number,
  meta: HolderMeta,
  timeoutMs: number,
): Promise<AcquireReply> {
  const args = [owner, ttlMs, meta.host, meta.pid, meta.cmd, Date.now()];
  return parseAcquireReply(
    await withTimeout(runScript(instance.client, ACQUIRE, [keys.lock, keys.fence], args), timeoutMs),
  );
}
