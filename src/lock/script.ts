// Run a script by EVALSHA and fall back to EVAL when the server does not know it yet.

import type { RedisClient } from '../redis/client.js';
import { isWrongValue, wrongValueError } from './foreign.js';
import { sha1Hex } from './sha1.js';

const shas = new Map<string, string>();

function sha1(lua: string): string {
  let sha = shas.get(lua);
  if (!sha) {
    sha = sha1Hex(lua);
    shas.set(lua, sha);
  }
  return sha;
}

export async function runScript(client: RedisClient, lua: string, keys: string[], args: (string | number)[]): Promise<unknown> {
  try {
    return await evalScript(client, lua, keys, args);
  } catch (error) {
    throw isWrongValue(error) ? await wrongValueError(client, keys, error) : error;
  }
}

async function evalScript(client: RedisClient, lua: string, keys: string[], args: (string | number)[]): Promise<unknown> {
  try {
    return await client.evalsha(sha1(lua), keys.length, ...keys, ...args);
  } catch (error) {
    if (!String((error as Error)?.message).startsWith('NOSCRIPT')) throw error;
    return client.eval(lua, keys.length, ...keys, ...args);
  }
}
