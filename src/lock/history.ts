// Read a key's history stream (scripts.ts HISTORY): the newest entries first. Appending is done
// by the scripts themselves, in the same call as the work.

import type { Instance } from '../redis/client.js';
import { withTimeout } from '../timeout.js';
import type { LockKeys } from './keys.js';
import { parseHistoryReply, type HistoryEntry } from './replies.js';

export type { HistoryEntry } from './replies.js';

/** The newest `count` entries, newest first (XREVRANGE … COUNT). */
export async function readHistory(instance: Instance, keys: LockKeys, count: number, timeoutMs: number): Promise<HistoryEntry[]> {
  return parseHistoryReply(await withTimeout(instance.client.call('XREVRANGE', keys.history, '+', '-', 'COUNT', String(count)), timeoutMs));
}
