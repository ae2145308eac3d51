// For test/scripts/: one redis-server per file, each script called through its handle
// (lock/define-script.ts) with fresh keys per test, and readers of what a script left behind.

import type { Redis } from 'ioredis';
import type { Script } from '../../src/backends/redis/lock/define-script.js';
import { lockKeys, type LockKeys } from '../../src/backends/redis/lock/keys.js';
import type { EnterInput } from '../../src/backends/redis/lock/line.js';
import type { HoldMode } from '../../src/backend/mode.js';
import { useRedisServer } from './server.js';

export const META = { host: 'host-a', pid: 4242, cmd: 'make deploy' };
export const TIMEOUT_MS = 5_000;

/** What enter.lua is asked by a dlock that waits in line for a 30 s lease (`more` overrides). */
export function entering(
  owner: string,
  mode: HoldMode = { kind: 'exclusive' },
  more: Partial<EnterInput> = {},
): EnterInput {
  return { owner, ttlMs: 30_000, meta: META, mode, join: true, waitedMs: 0, keyOptions: {}, ...more };
}

export interface ScriptServer {
  /** A client of the file's server. */
  redis(): Redis;
  /** The keys of a lock no other test uses. */
  fresh(): LockKeys;
  /** The script run through its handle: KEYS and ARGV built from `input`, its reply parsed. */
  run<Input, Reply>(script: Script<Input, Reply>, keys: LockKeys, input: Input): Promise<Reply>;
  /** The history stream's entries, oldest first, each as its fields. */
  history(keys: LockKeys): Promise<Record<string, string>[]>;
  /** The server's clock (TIME) in whole ms: what the scripts stamp times with. */
  serverMs(): Promise<number>;
}

export function useScriptServer(): ScriptServer {
  let client: Redis;
  useRedisServer((server) => (client = server.client()));
  let made = 0;
  return {
    redis: () => client,
    fresh: () => lockKeys('dlock:', `script-${++made}`),
    run: (script, keys, input) => script.run(client, keys, input, TIMEOUT_MS),
    async history(keys) {
      const entries = await client.xrange(keys.history, '-', '+');
      return entries.map(([, flat]) =>
        Object.fromEntries(flat.flatMap((_, i) => (i % 2 ? [] : [[flat[i], flat[i + 1]]]))),
      );
    },
    async serverMs() {
      const [seconds, micros] = await client.time();
      return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    },
  };
}

/** The message published on `channel` by `action`, or undefined if none arrived within 200 ms. */
export async function publishedOn(
  redis: Redis,
  channel: string,
  action: () => Promise<unknown>,
): Promise<string | undefined> {
  const listener = redis.duplicate();
  try {
    await listener.subscribe(channel);
    const heard = new Promise<string>((resolve) =>
      listener.on('message', (_channel, message: string) => resolve(message)),
    );
    await action();
    return await Promise.race([heard, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 200))]);
  } finally {
    listener.disconnect();
  }
}
