// Single-instance extend: renew the lease only while we still own it.

import type { Instance } from '../redis/client.js';
import { withTimeout } from '../timeout.js';
import type { LockKeys } from './keys.js';
import { parseFlagReply } from './replies.js';
import { runScript } from './script.js';
import { EXTEND } from './scripts.js';

/** true: renewed; false: refused (the lock is gone or someone else's). Throws on errors. */
export async function extendOn(instance: Instance, keys: LockKeys, owner: string, ttlMs: number, timeoutMs: number): Promise<boolean> {
  return parseFlagReply('extend', await withTimeout(runScript(instance.client, EXTEND, [keys.lock], [owner, ttlMs], true), timeoutMs));
}
