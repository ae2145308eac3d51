// Single-instance extend: renew the lease only while we still own it.

import type { Instance } from '../redis/client.js';
import { withTimeout } from '../clock.js';
import type { LockKeys } from './keys.js';
import { lossArgs, type LossRecord } from './line.js';
import { parseFlagReply } from './replies.js';
import { runScript } from './script.js';
import { EXTEND } from './scripts.js';

/**
 * true: renewed; false: refused (the lock is gone or someone else's; with `record`, the history says so). Throws on
 * errors.
 */
export async function extendOn(
  instance: Instance,
  keys: LockKeys,
  owner: string,
  ttlMs: number,
  timeoutMs: number,
  record?: LossRecord,
): Promise<boolean> {
  return parseFlagReply(
    'extend',
    await withTimeout(
      runScript(instance.client, EXTEND, [keys.lock, keys.history], [owner, ttlMs, ...lossArgs(record)], true),
      timeoutMs,
    ),
  );
}
