// Redlock round 2: raise one instance's fence counter to at least T while we hold it there.

import { defineScript } from './define-script.js';
import type { LockKeys } from './keys.js';
import { isFence, parseFlagReply } from './replies.js';
import { COMMON_CALLS, RAISE_FENCE } from './scripts.js';

/** lua/raise-fence.lua: the counter (and the hash's fence) become at least `fence` while `owner` holds it. */
export const raiseFenceScript = defineScript({
  name: 'raise-fence',
  lua: RAISE_FENCE,
  commands: [...COMMON_CALLS, 'HGET'],
  keys: (k: LockKeys) => [k.lock, k.fence],
  args: (i: { owner: string; fence: string }) => {
    // Never write what is not a token to a counter (every reply's fence was checked already).
    if (!isFence(i.fence)) throw new Error(`refusing to raise the fence counter to ${JSON.stringify(i.fence)}`);
    return [i.owner, i.fence];
  },
  parse: (reply) => parseFlagReply('raise-fence', reply),
});

/** The larger of two tokens (checked by isFence: digits without leading zeros; exact past 2^53). */
export function maxFence(a: string, b: string): string {
  if (a.length !== b.length) return a.length > b.length ? a : b;
  return a >= b ? a : b;
}
