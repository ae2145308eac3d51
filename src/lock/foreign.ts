// A lock's key that holds something dlock did not write (`SET dlock:{k} hello`, a fence
// counter that is not an integer) makes every script fail with WRONGTYPE or "not an integer".
// Say which key it is and what it holds, so the user can remove it or pick another name.

import { AnsweredError, type RedisClient } from '../redis/client.js';

/** Script errors that mean a key of ours holds a value of the wrong kind. */
const WRONG_VALUE = /^(WRONGTYPE|ERR value is not an integer|ERR increment or decrement would overflow)/;

export function isWrongValue(error: unknown): boolean {
  return WRONG_VALUE.test(String((error as Error)?.message ?? ''));
}

/**
 * The error naming the key at fault: `keys` are a script's KEYS, the lock hash first; a key
 * ending in ":fence" is the counter. TYPE is asked outside the ACL dlock documents: if it is
 * denied, the message says only what the key is not.
 */
export async function wrongValueError(client: RedisClient, keys: string[], error: unknown): Promise<Error> {
  const typeOf = async (key: string) => {
    try {
      return String(await client.type(key));
    } catch {
      return undefined;
    }
  };
  const [lock, ...rest] = keys;
  const lockType = await typeOf(lock);
  if (lockType !== undefined && lockType !== 'hash' && lockType !== 'none') {
    return new AnsweredError(`the key ${lock} holds a ${lockType}, not a lock dlock wrote (a hash): delete it if nothing needs it, or use another key or --prefix`);
  }
  const fence = rest.find((key) => key.endsWith(':fence'));
  if (fence !== undefined && (lockType !== undefined || /integer|overflow/.test(String((error as Error)?.message)))) {
    const fenceType = await typeOf(fence);
    const holds = fenceType === undefined || fenceType === 'string' ? 'a value that is not an integer' : `a ${fenceType}`;
    return new AnsweredError(`the key ${fence} holds ${holds}, not dlock's fencing counter: set it to an integer above every token handed out, or use another --prefix`);
  }
  return new AnsweredError(`the key ${lock} holds a value dlock did not write (not a hash): delete it if nothing needs it, or use another key or --prefix`);
}
