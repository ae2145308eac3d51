// Lock names for the shell completion: every target asked at once, the first to answer wins (a
// Tab press needs no quorum, only a quick list).

import type { RedisConnection } from './connection.js';
import { keyFromLockName } from './lock/keys.js';
import { parseScanReply } from './lock/replies.js';
import { connect, disconnectAll, type Instance } from './client/client.js';
import { masterNodes } from './client/nodes.js';

/**
 * Every name of a lock under the prefix whose key starts with `typed`, from the first target that
 * connects and answers (the whole SCAN: the caller bounds the time, and so how many); `close`
 * disconnects every target that connected.
 */
export function lookForNames(
  config: RedisConnection,
  typed: string,
  connectTimeoutMs: number,
): { names: Promise<string[]>; close(): void } {
  const instances: Instance[] = [];
  const names = Promise.any(
    config.targets.map(async (target) => {
      const instance = await connect(target, connectTimeoutMs);
      instances.push(instance);
      return scanNames(instance, config.prefix, typed);
    }),
  );
  return { names, close: () => disconnectAll(instances) };
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
    } while (cursor !== '0');
  }
  return keys;
}

/** `text` matched literally by SCAN MATCH. */
function glob(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}
