// dlock __complete-keys [prefix]: the lock names under the configured prefix that start with
// `prefix`, one per line, for the shell completion scripts. A Tab press must never hang: Redis
// gets 200 ms to connect and answer, in all; any failure or a late answer prints nothing.

import { connectionConfig, type ConnectionConfig, type Env } from '../config/index.js';
import { keyFromLockName } from '../lock/keys.js';
import { parseScanReply } from '../lock/replies.js';
import { connect, disconnectAll, type Instance } from '../redis/client.js';
import { masterNodes } from '../redis/nodes.js';
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
  const instances: Instance[] = [];
  try {
    // connect's own bound is later: the deadline below decides.
    const found = await withinBound(
      Promise.any(
        config.targets.map(async (target) => {
          const instance = await connect(target, 2 * COMPLETE_KEYS_BOUND_MS);
          instances.push(instance);
          return scanNames(instance, config.prefix, typed);
        }),
      ),
    );
    const keys = [...new Set(found)].sort().filter(isShellSafe);
    if (keys.length === 0) return 1;
    stdout.write(`${keys.join('\n')}\n`);
    return 0;
  } catch {
    return 1;
  } finally {
    disconnectAll(instances);
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

/** Names of locks under `prefix` whose key starts with `typed`, from every master (SCAN, never KEYS). */
async function scanNames(instance: Instance, prefix: string, typed: string): Promise<string[]> {
  const pattern = `${glob(prefix)}{${glob(typed)}*}`;
  const keys: string[] = [];
  for (const node of masterNodes(instance.client)) {
    let cursor = '0';
    do {
      const page = parseScanReply(await node.scan(cursor, 'MATCH', pattern, 'COUNT', 500, 'TYPE', 'hash'));
      cursor = page.cursor;
      keys.push(...page.names.flatMap((name) => keyFromLockName(prefix, name) ?? []));
    } while (cursor !== '0' && keys.length < MAX_KEYS);
  }
  return keys;
}

/** `text` matched literally by SCAN MATCH. */
function glob(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}

/** A name a shell can be offered: one line of printable text (a forged name may hold anything). */
function isShellSafe(key: string): boolean {
  return key.length > 0 && key.length <= 512 && !/[\p{C}\n]/u.test(key);
}
