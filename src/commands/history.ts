// dlock history <key>: the key's recent events, newest first (exit 0; 1 when it has none).
// One instance only: with Redlock the scripts record nothing.

import type { ConnectionConfig } from '../config/index.js';
import { openBackend, unavailable } from '../backend/index.js';
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
  const backend = await openBackend(config);
  try {
    const read = await backend.lock(key).history(options.count);
    // config refuses `history` where none is kept; one that cannot be read is 69.
    if (read && 'failure' in read) throw unavailable(backend.caps, [read.failure]);
    const events = read?.events ?? [];
    if (options.json) out.write(`${toJson(historyJson(events))}\n`);
    else out.write(events.length === 0 ? `${key}: no history\n` : historyTable(events));
    return events.length === 0 ? 1 : 0;
  } finally {
    backend.close();
  }
}
