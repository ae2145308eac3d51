// Read a key's history stream (scripts.ts HISTORY): the newest entries first. Appending is done
// by the scripts themselves, in the same call as the work.

import type { Instance } from '../client/client.js';
import { withTimeout } from '../../../clock.js';
import { isWrongValue, wrongValueError } from './foreign.js';
import type { LockKeys } from './keys.js';
import { parseHistoryReply } from './replies.js';
import { type HistoryEntry } from '../../../backend/history.js';

/** The newest `count` entries, newest first (XREVRANGE … COUNT). */
export async function readHistory(
  instance: Instance,
  keys: LockKeys,
  count: number,
  timeoutMs: number,
): Promise<HistoryEntry[]> {
  const newest = instance.client.call('XREVRANGE', keys.history, '+', '-', 'COUNT', String(count));
  const read = newest.catch(async (error: unknown) => {
    // A key of another type where the history belongs: name it (foreign.ts), as the scripts do.
    throw isWrongValue(error) ? await wrongValueError(instance.client, [keys.history], error) : error;
  });
  return parseHistoryReply(await withTimeout(read, timeoutMs));
}
