// dlock history <key>: the key's recent events, newest first (exit 0; 1 when it has none).
// One instance only: with Redlock the scripts record nothing.

import type { ConnectionConfig } from '../config/index.js';
import { close, historyOf, openLockSet } from '../backends/redis/index.js';
import { stdout, type Output } from '../output.js';
import { toJson } from '../untrusted.js';
import { historyJson, historyTable } from '../views/history-text.js';

export interface HistoryOptions {
  count: number;
  json: boolean;
}

export async function history(
  config: ConnectionConfig,
  key: string,
  options: HistoryOptions,
  out: Output = stdout,
): Promise<number> {
  const set = await openLockSet(config, key);
  try {
    const entries = await historyOf(set, options.count);
    if (options.json) out.write(`${toJson(historyJson(entries))}\n`);
    else out.write(entries.length === 0 ? `${key}: no history\n` : historyTable(entries));
    return entries.length === 0 ? 1 : 0;
  } finally {
    close(set);
  }
}
