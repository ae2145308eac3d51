// Lock names for the shell completion: one keys-only range from the prefix and what was typed.

import { kvsOf, prefixEnd, prefixStart } from './codec.js';
import type { EtcdConnection } from './connection.js';
import { Gateway } from './gateway.js';
import { escapeName, parseHoldKey } from './keys.js';

/** Names the completion offers at most (a Tab press needs a few). */
const MAX_KEYS = 10_000;

export function lookForNames(
  connection: EtcdConnection,
  typed: string,
  timeoutMs: number,
): { names: Promise<string[]>; close(): void } {
  const gateway = new Gateway(connection);
  const from = `${connection.prefix}${escapeName(typed)}`;
  const names = gateway
    .call(
      '/v3/kv/range',
      { key: prefixStart(from), range_end: prefixEnd(from), keys_only: true, limit: String(MAX_KEYS) },
      timeoutMs,
    )
    .then((reply) => [...new Set(kvsOf(reply).flatMap((kv) => parseHoldKey(connection.prefix, kv.key)?.name ?? []))]);
  return { names, close: () => gateway.close() };
}
