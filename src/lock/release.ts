// Single-instance release: compare-and-delete, then tell the waiters. Never retried.

import type { Instance } from '../redis/client.js';
import { withTimeout } from '../timeout.js';
import type { LockKeys } from './keys.js';
import { parseFlagReply } from './replies.js';
import { runScript } from './script.js';
import { RELEASE } from './scripts.js';

/**
 * true: it was ours and is deleted; false: it was not ours (any more). Throws on errors.
 * `notify: false` leaves the waiters asleep (undoing a partial hold that turned nobody away).
 */
export async function releaseOn(instance: Instance, keys: LockKeys, owner: string, timeoutMs: number, notify = true): Promise<boolean> {
  return parseFlagReply('release', await withTimeout(runScript(instance.client, RELEASE, [keys.lock, keys.released], [owner, notify ? '1' : '0']), timeoutMs));
}
