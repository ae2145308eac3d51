// A lock's key that holds something dlock did not write (`SET dlock:{k} hello`, a fence
// counter that is not an integer, a string where the line's sorted set belongs) makes a script
// refuse before it writes anything. Say which key it is and what it holds, so the user can
// remove it or pick another name.

import { AnsweredError, type RedisClient } from '../client/client.js';

/** Script errors that mean a key of ours holds a value of the wrong kind. */
const WRONG_VALUE = /^(WRONGTYPE|ERR value is not an integer|ERR increment or decrement would overflow)/;

/** The scripts' own refusal (lua/common.lua): "WRONGTYPE dlock KEYS[i] <kind>". */
const REFUSED = /^WRONGTYPE dlock KEYS\[(\d+)\] (\w+)/;

export function isWrongValue(error: unknown): boolean {
  return WRONG_VALUE.test(String((error as Error)?.message ?? ''));
}

/** What each of a lock's keys is to dlock and the Redis type it must have, by the name's ending (keys.ts). */
const ROLES: Record<string, { type: string; what: string }> = {
  '': { type: 'hash', what: 'a lock dlock wrote (a hash)' },
  ':fence': { type: 'string', what: "dlock's fencing counter" },
  ':holders': { type: 'zset', what: "dlock's holders of --slots/--shared (a sorted set)" },
  ':line': { type: 'zset', what: "dlock's line of waiters (a sorted set)" },
  ':line:expiry': { type: 'zset', what: "dlock's place leases of the line (a sorted set)" },
  ':line:info': { type: 'hash', what: "dlock's details of the waiters in line (a hash)" },
  ':done': { type: 'string', what: "dlock's --once-per done mark (a string)" },
  ':history': { type: 'stream', what: "dlock's history of the lock (a stream)" },
  ':totals': { type: 'hash', what: "dlock's counts of the lock for all time (a hash)" },
};

/** The role of one of a lock's keys: what follows the hash tag `{<key>}` in its name. */
function roleOf(key: string): { type: string; what: string } | undefined {
  return ROLES[key.slice(key.lastIndexOf('}') + 1)];
}

/**
 * The error naming the key at fault: `keys` are a script's (or a command's) KEYS. The scripts
 * name the key's index; any other such error is matched by asking each key's TYPE. TYPE is asked
 * outside the ACL dlock documents: if it is denied, the message says only what the key is not.
 */
export async function wrongValueError(client: RedisClient, keys: string[], error: unknown): Promise<Error> {
  // A type's name as Redis spells them (a lying server's answer of any other shape is unknown).
  const typeOf = async (key: string) => {
    try {
      const type = String(await client.type(key));
      return /^[A-Za-z0-9_-]{1,32}$/.test(type) ? type : undefined;
    } catch {
      return undefined;
    }
  };
  const message = String((error as Error)?.message);
  const refused = REFUSED.exec(message);
  const named = refused ? keys[Number(refused[1]) - 1] : undefined;
  if (named !== undefined) return keyError(named, await typeOf(named));
  for (const key of keys) {
    const type = await typeOf(key);
    const role = roleOf(key);
    if (role && type !== undefined && type !== 'none' && type !== role.type) return keyError(key, type);
  }
  const fence = keys.find((key) => key.endsWith(':fence'));
  if (fence !== undefined && /integer|overflow/.test(message)) return keyError(fence, 'string');
  return keyError(keys[0], undefined);
}

/** One line: the key, what it holds (`type` undefined: unknown), what dlock keeps there, and what to do. */
function keyError(key: string, type: string | undefined): Error {
  const role = roleOf(key) ?? ROLES[''];
  if (role === ROLES[':fence']) {
    const holds = type === undefined || type === 'string' ? 'a value that is not an integer' : `a ${type}`;
    const fix = 'set it to an integer above every token handed out, or use another --prefix';
    return new AnsweredError(`the key ${key} holds ${holds}, not ${role.what}: ${fix}`);
  }
  const known = type !== undefined && type !== role.type;
  const holds = known ? `a ${type}, not ${role.what}` : `a value dlock did not write (not a ${role.type})`;
  const fix = 'delete it if nothing needs it, or use another key or --prefix';
  return new AnsweredError(`the key ${key} holds ${holds}: ${fix}`);
}
