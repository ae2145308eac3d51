// One scrape: read the store and make the exposition text (dlock metrics, its --listen, and the
// board's /metrics: the same code, the same series).

import { basename } from 'node:path';
import type { ConnectionConfig, MetricsOutput } from '../config/index.js';
import { UnavailableError } from '../errors.js';
import { storeNow, type UnreadableLock } from '../backend/index.js';
import type { Logger } from '../log.js';
import { unreadableSummary } from '../views/status-text.js';
import { collectLocks, invalidCountsSummary } from './collect.js';
import { buildRegistry, failedRegistry, type Origin } from './registry.js';

export interface Scraped {
  text: string;
  contentType: string;
  unreadable: UnreadableLock[];
  /** Set when nothing could be read at all: then the text is dlock_metrics_collect_success 0 alone. */
  failed: UnavailableError | undefined;
}

/**
 * Read the store now; the text, what could not be read (said on stderr when `serving`), and the
 * error when nothing could be read at all.
 */
export function scraper(
  config: ConnectionConfig,
  keys: string[],
  { only, output, log }: { only: boolean; output: MetricsOutput; log: Logger },
): () => Promise<Scraped> {
  const serving = output.kind === 'listen';
  // The dlock_metrics_* series say where they came from: two files of one host never repeat one.
  const origin: Origin = {
    prefix: config.prefix,
    ...(output.kind === 'textfile' ? { file: basename(output.path) } : {}),
  };
  return async () => {
    try {
      const collection = await collectLocks(config, keys, { only });
      // The age of the last success counts to the server's clock, which stamped it.
      const registry = buildRegistry(collection, storeNow(collection.clock), Date.now(), origin);
      const unreadable = collection.unreadable;
      if (serving && unreadable.length > 0)
        log.warn(
          `could not read ${locks(unreadable.length)} under ${config.prefix} (${unreadableSummary(unreadable)})`,
        );
      // Forged counts are left out of the text (unknown): said once per collection, escaped.
      const invalid = invalidCountsSummary(collection.locks);
      if (invalid) log.warn(invalid);
      return { text: await registry.metrics(), contentType: registry.contentType, unreadable, failed: undefined };
    } catch (error) {
      if (!(error instanceof UnavailableError)) throw error;
      const registry = failedRegistry(Date.now(), origin);
      if (serving) log.warn(`scrape failed: ${error.message}`);
      return { text: await registry.metrics(), contentType: registry.contentType, unreadable: [], failed: error };
    }
  };
}

/** "1 lock", "2 locks". */
export function locks(count: number): string {
  return `${count} ${count === 1 ? 'lock' : 'locks'}`;
}
