// dlock __complete-keys [prefix]: the lock names under the configured prefix that start with
// `prefix`, one per line and by name, at most MAX_KEYS of them, for the shell completion scripts.
// A Tab press must never hang: Redis gets 200 ms to connect and SCAN to the end, in all; any
// failure or a late answer prints nothing.

import { connectionConfig, type ConnectionConfig, type Env } from '../config/index.js';
import { backendModule } from '../backend/index.js';
import { stdout } from '../output.js';
import { TimeoutError } from '../clock.js';

/** The bound from the first connect to the last SCAN page. */
export const COMPLETE_KEYS_BOUND_MS = 200;
const MAX_KEYS = 1000;

/** The Redis and prefix from DLOCK_REDIS_URL, DLOCK_PREFIX, DLOCK_TLS_* …; bad settings print nothing. */
export async function completeKeysFromEnv(env: Env, typed: string): Promise<number> {
  let config: ConnectionConfig;
  try {
    config = connectionConfig({}, env);
  } catch {
    return 1;
  }
  return completeKeys(config, typed);
}

/** Print the matching lock names (exit 0), or nothing (exit 1) when none could be had in time. */
export async function completeKeys(config: ConnectionConfig, typed: string): Promise<number> {
  // connect's own bound is later: the deadline below decides.
  const look = (await backendModule(config)).names(config, typed, 2 * COMPLETE_KEYS_BOUND_MS);
  try {
    const found = await withinBound(look.names);
    const keys = offered([...new Set(found)].sort().filter(isShellSafe));
    if (keys.length === 0) return 1;
    stdout.write(`${keys.join('\n')}\n`);
    return 0;
  } catch {
    return 1;
  } finally {
    look.close();
  }
}

/**
 * `work`, or a TimeoutError once the bound has passed. The timer defers its verdict by one turn
 * of the event loop, so that a reply that came in time but was not read yet (dlock itself was
 * descheduled on a busy machine) still counts.
 */
async function withinBound<T>(work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    const fail = () => reject(new TimeoutError(COMPLETE_KEYS_BOUND_MS));
    timer = setTimeout(() => setImmediate(fail), COMPLETE_KEYS_BOUND_MS);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * At most MAX_KEYS of the sorted `keys`: the first ones, and always the last. The shells insert
 * the candidates' longest common prefix, and that of a sorted list is the one of its first and
 * last names: so a cut list still inserts only what every lock name shares, never a longer
 * prefix that would leave the names past the cut out.
 */
function offered(keys: string[]): string[] {
  return keys.length <= MAX_KEYS ? keys : [...keys.slice(0, MAX_KEYS - 1), keys[keys.length - 1]];
}

/** A name a shell can be offered: one line of printable text (a forged name may hold anything). */
function isShellSafe(key: string): boolean {
  return key.length > 0 && key.length <= 512 && !/[\p{C}\n]/u.test(key);
}
