// Redlock round 2: raise one instance's fence counter to at least T while we hold it there.

import type { Instance } from '../redis/client.js';
import { withTimeout } from '../clock.js';
import type { LockKeys } from './keys.js';
import { isFence, parseFlagReply } from './replies.js';
import { runScript } from './script.js';
import { RAISE_FENCE } from './scripts.js';

export async function raiseFenceOn(
  instance: Instance,
  keys: LockKeys,
  owner: string,
  fence: string,
  timeoutMs: number,
): Promise<boolean> {
  // Never write what is not a token to a counter (every reply's fence was checked already).
  if (!isFence(fence)) throw new Error(`refusing to raise the fence counter to ${JSON.stringify(fence)}`);
  return parseFlagReply(
    'raise-fence',
    await withTimeout(runScript(instance.client, RAISE_FENCE, [keys.lock, keys.fence], [owner, fence]), timeoutMs),
  );
}

/** The larger of two tokens (checked by isFence: digits without leading zeros; exact past 2^53). */
export function maxFence(a: string, b: string): string {
  if (a.length !== b.length) return a.length > b.length ? a : b;
  return a >= b ? a : b;
}
