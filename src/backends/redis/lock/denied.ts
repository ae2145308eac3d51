// A script the ACL stopped says only "The user executing the script can't run this command or
// subcommand": it does not name the command. Ask the server which of the script's commands the
// user may not run on the lock's keys (Redis 7's redis.acl_check_cmd, in one EVAL), so the
// message names the grant to add. Best effort: where the server cannot tell, the error stays.

import type { RedisClient } from '../client/client.js';

/** Script errors that mean the ACL refused a command the script ran. */
const DENIED = /^(ERR )?The user executing the script can't run this command/;

export function isDenied(error: unknown): boolean {
  return DENIED.test(String((error as Error)?.message ?? ''));
}

/**
 * ARGV: a key, then command names; returns the names the user may not run on that key (a
 * channel for PUBLISH, which shares the prefix). The server checks no arity here, so the key
 * alone is given: more words would be checked as keys of DEL or EXISTS.
 */
const CHECK = `
local denied = {}
for i = 2, #ARGV do
  if not redis.acl_check_cmd(ARGV[i], ARGV[1]) then denied[#denied + 1] = ARGV[i] end
end
return denied
`;

/** The commands a script's source runs (`redis.call('HGETALL', ...)`), lower case, once each. */
export function commandsOf(lua: string): string[] {
  return [...new Set([...lua.matchAll(/redis\.p?call\(\s*'([A-Za-z]+)'/g)].map(([, name]) => name.toLowerCase()))];
}

/** The error of a denied script, naming the grants the user lacks among its commands on `key`. */
export async function deniedError(client: RedisClient, lua: string, key: string, error: unknown): Promise<unknown> {
  const commands = commandsOf(lua);
  let lacking: unknown;
  try {
    lacking = await client.eval(CHECK, 0, key, ...commands);
  } catch {
    return error;
  }
  const names = Array.isArray(lacking) ? lacking.filter((name): name is string => typeof name === 'string') : [];
  if (names.length === 0) return error;
  // Redis appends where in the script it stopped: of no use to the user.
  const message = String((error as Error).message).replace(/\s*script: \w+, on @\w+:\d+\.?$/, '');
  // Every command refused on the key: the key pattern is what is missing.
  if (names.length === commands.length && commands.length > 1) {
    const prefix = key.slice(0, Math.max(0, key.indexOf('{')));
    return new Error(`${message}: it may not use the key ${key} (grant ~${prefix}* &${prefix}*)`);
  }
  const grants = names.map((name) => `+${name}`).join(' ');
  const upper = names.map((name) => name.toUpperCase()).join(', ');
  return new Error(`${message}: it may not run ${upper} (grant ${grants})`);
}
