// Run a script by EVALSHA and fall back to EVAL when the server does not know it yet.

import type { RedisClient } from '../redis/client.js';
import { deniedError, isDenied } from './denied.js';
import { isWrongValue, wrongValueError } from './foreign.js';
import * as scripts from './scripts.js';

/** Each script's SHA-1 by name, computed by scripts/build.mjs: a plain run then needs no node:crypto. */
declare const __DLOCK_SCRIPT_SHA1__: Record<string, string> | undefined;

const shas = new Map<string, string>();
if (typeof __DLOCK_SCRIPT_SHA1__ === 'object') {
  for (const [name, sha] of Object.entries(__DLOCK_SCRIPT_SHA1__))
    shas.set((scripts as Record<string, unknown>)[name] as string, sha);
}

function sha1(lua: string): string {
  let sha = shas.get(lua);
  if (!sha) {
    sha = process.getBuiltinModule('node:crypto').createHash('sha1').update(lua).digest('hex');
    shas.set(lua, sha);
  }
  return sha;
}

/**
 * `evalFirst`: the first time this client runs the script, EVAL it (which also caches it on the
 * server) instead of EVALSHA + NOSCRIPT + EVAL: renewals use it, since the extra round trip
 * would double the first renewal's time on a slow link.
 */
export async function runScript(
  client: RedisClient,
  lua: string,
  keys: string[],
  args: (string | number)[],
  evalFirst = false,
): Promise<unknown> {
  try {
    if (evalFirst && !ranOn(client).has(lua)) {
      const result = await client.eval(lua, keys.length, ...keys, ...args);
      ranOn(client).add(lua);
      return result;
    }
    return await evalScript(client, lua, keys, args);
  } catch (error) {
    if (isDenied(error)) throw await deniedError(client, lua, keys[0], error);
    throw isWrongValue(error) ? await wrongValueError(client, keys, error) : error;
  }
}

/** The scripts this process has EVALed on each client. */
const evaluated = new WeakMap<RedisClient, Set<string>>();

function ranOn(client: RedisClient): Set<string> {
  let scripts = evaluated.get(client);
  if (!scripts) evaluated.set(client, (scripts = new Set()));
  return scripts;
}

async function evalScript(
  client: RedisClient,
  lua: string,
  keys: string[],
  args: (string | number)[],
): Promise<unknown> {
  try {
    return await client.evalsha(sha1(lua), keys.length, ...keys, ...args);
  } catch (error) {
    if (!String((error as Error)?.message).startsWith('NOSCRIPT')) throw error;
    return client.eval(lua, keys.length, ...keys, ...args);
  }
}
