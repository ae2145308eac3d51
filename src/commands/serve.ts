// dlock serve: the read-only board of the locks under the prefix, until SIGTERM or SIGINT (exit 0).
// Loaded only for this command; the metrics code (prom-client) only at the first /metrics.

import type { ServeConfig } from '../config/index.js';
import { isIPv4 } from 'node:net';
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
      hosts: loopbackHosts(host, port),
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

/**
 * On a loopback address, the names a browser on this host reaches it by: any other Host header is a page of
 * another site whose name was pointed at 127.0.0.1 (DNS rebinding). On another address: undefined, any.
 */
function loopbackHosts(host: string, port: number): Set<string> | undefined {
  // An IPv4-mapped IPv6 address (::ffff:127.0.0.1) is loopback too.
  const v4 = host.toLowerCase().replace(/^::ffff:/, '');
  const loopback = host === 'localhost' || host === '::1' || (isIPv4(v4) && v4.startsWith('127.'));
  if (!loopback) return undefined;
  const names = ['localhost', '127.0.0.1', '[::1]', host.includes(':') ? `[${host}]` : host];
  return new Set(names.map((name) => `${name}:${port}`));
}
