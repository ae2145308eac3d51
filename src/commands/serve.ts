// dlock serve: the read-only board of the locks under the prefix, until SIGTERM or SIGINT (exit 0).
// Loaded only for this command; the metrics code (prom-client) only at the first /metrics.

import type { ServeConfig } from '../config/index.js';
import { EXIT } from '../errors.js';
import { Logger } from '../log.js';
import { listenOn, untilStopped } from '../serve/listen.js';
import { readBoard, readOneLock } from '../serve/read.js';
import { boardServer } from '../serve/server.js';

/** How often the page asks, and how long one read of the store serves every viewer. */
export const REFRESH_MS = 2000;

export async function serve({ config, keys, host, port }: ServeConfig): Promise<number> {
  const log = new Logger(config.verbosity, config.logFormat);
  const server = boardServer(
    {
      prefix: config.prefix,
      refreshMs: REFRESH_MS,
      readBoard: () => readBoard(config, keys),
      readLock: (key) => readOneLock(config, key),
      metrics: async () => {
        const { scraper } = await import('../metrics/scrape.js');
        return scraper(config, keys, { only: false, output: { kind: 'listen', host, port }, log })();
      },
    },
    log,
  );
  // A port taken, an address not on this host: the board cannot be served (69, one line).
  const url = `${await listenOn(server, host, port, EXIT.unavailable)}/`;
  log.warn(`serving the board on ${url}`, { event: 'listening', url });
  return untilStopped(server);
}
