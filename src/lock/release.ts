// Single-instance release: compare-and-delete, then tell the waiters. One attempt; the retries
// (it is idempotent: a second DEL by the same owner finds nothing) are the caller's.

import type { Instance } from '../redis/client.js';
import { withTimeout } from '../timeout.js';
import type { LockKeys } from './keys.js';
import { parseReleaseReply } from './replies.js';
import { runScript } from './script.js';
import { RELEASE } from './scripts.js';

/**
 * released: it was ours and is deleted; unannounced: deleted, but the server refused the
 * PUBLISH that wakes the waiters (they notice by polling); not-ours: it was not ours (any more).
 * Throws on errors (an error reply means nothing was deleted; a lost reply may hide a DEL).
 * `notify: false` leaves the waiters asleep (undoing a partial hold that turned nobody away).
 */
export type ReleaseReply = 'released' | 'unannounced' | 'not-ours';

export async function releaseOn(instance: Instance, keys: LockKeys, owner: string, timeoutMs: number, notify = true): Promise<ReleaseReply> {
  return parseReleaseReply(await withTimeout(runScript(instance.client, RELEASE, [keys.lock, keys.released], [owner, notify ? '1' : '0']), timeoutMs));
}
