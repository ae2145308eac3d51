// Single-instance acquire: one ACQUIRE script call on one Redis.

import type { Instance } from '../redis/client.js';
import { withTimeout } from '../timeout.js';
import type { LockKeys } from './keys.js';
import { runScript } from './script.js';
import { ACQUIRE } from './scripts.js';

export interface HolderMeta {
  host: string;
  pid: number;
  cmd: string;
}

/** Not acquired: `owner` is the holder's token ("" for a key dlock did not write). */
export type AcquireReply = { acquired: true; fence: string } | { acquired: false; pttlMs: number; owner: string };

export async function acquireOn(
  instance: Instance,
  keys: LockKeys,
  owner: string,
  ttlMs: number,
  meta: HolderMeta,
  timeoutMs: number,
): Promise<AcquireReply> {
  const args = [owner, ttlMs, meta.host, meta.pid, meta.cmd, Date.now()];
  const reply = (await withTimeout(runScript(instance.client, ACQUIRE, [keys.lock, keys.fence], args), timeoutMs)) as [number, string | number, string?];
  return reply[0] === 1 ? { acquired: true, fence: String(reply[1]) } : { acquired: false, pttlMs: Number(reply[1]), owner: String(reply[2] ?? '') };
}
