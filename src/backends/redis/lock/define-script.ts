// One typed handle per Lua script (defineScript): its KEYS and ARGV named where they are built,
// its reply parsed, the commands it calls declared. Run by EVALSHA, falling back to EVAL when the
// server does not know the script yet.

import { withTimeout } from '../../../clock.js';
import type { RedisClient } from '../client/client.js';
import { deniedError, isDenied } from './denied.js';
import { isWrongValue, wrongValueError } from './foreign.js';
import type { LockKeys } from './keys.js';
import * as scripts from './scripts.js';

/** What a script is: its Lua, the commands it calls, and how its KEYS, ARGV and reply are made. */
export interface ScriptSpec<Input, Reply> {
  /** Its name in tests and messages (the file's name in lua/). */
  name: string;
  /** The Lua as sent (scripts.ts). */
  lua: string;
  /** Every command its Lua calls (redis.call/pcall), upper case: doctor's ACL check asks about these. */
  commands: readonly string[];
  /** KEYS, in order: the only place their order is written. */
  keys: (keys: LockKeys) => string[];
  /** ARGV, in order. */
  args: (input: Input, keys: LockKeys) => (string | number)[];
  /** The reply checked and typed (replies.ts); a reply of another shape throws. */
  parse: (reply: unknown, input: Input) => Reply;
  /** EVAL on this client's first run instead of EVALSHA (see runScript). */
  evalFirst?: boolean;
  /** The script's own refusals in dlock's words: the error to throw instead, or undefined for the error as it is. */
  explain?: (error: unknown, keys: LockKeys) => Error | undefined;
}

export interface Script<Input, Reply> extends ScriptSpec<Input, Reply> {
  /** Run it on one instance within `timeoutMs` (else it rejects) and parse its reply. */
  run(client: RedisClient, keys: LockKeys, input: Input, timeoutMs: number): Promise<Reply>;
}

/** A script's handle: `run` builds KEYS and ARGV, sends the script and parses what it answers. */
export function defineScript<Input, Reply>(spec: ScriptSpec<Input, Reply>): Script<Input, Reply> {
  return {
    ...spec,
    async run(client, keys, input, timeoutMs) {
      const sent = runScript(client, spec.lua, spec.keys(keys), spec.args(input, keys), spec.evalFirst);
      const reply = await withTimeout(sent, timeoutMs).catch((error: unknown) => {
        throw spec.explain?.(error, keys) ?? error;
      });
      return spec.parse(reply, input);
    },
  };
}

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
async function runScript(
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
