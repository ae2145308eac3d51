// dlock metrics [key...]: the locks under the prefix as Prometheus metrics, once (stdout, a
// textfile, a Pushgateway; exit 0, or 69 after writing when a lock could not be read) or served
// at /metrics until SIGTERM or SIGINT. Loaded only for this command: prom-client is not part of
// any other command's start-up.

import type { MetricsConfig } from '../config/index.js';
import { UnavailableError } from '../errors.js';
import { serverNow } from '../lockset/index.js';
import { Logger } from '../log.js';
import { stdout, type Output } from '../output.js';
import { unreadableSummary } from '../views/status-text.js';
import { collectLocks } from '../metrics/collect.js';
import { pushMetrics } from '../metrics/push.js';
import { buildRegistry } from '../metrics/registry.js';
import { serveMetrics } from '../metrics/serve.js';
import { writeAtomically } from '../metrics/textfile.js';

/** Collect and write the metrics once, or serve them (--listen); the exit status. */
export async function metrics({ config, keys, output }: MetricsConfig, out: Output = stdout): Promise<number> {
  const log = new Logger(config.verbosity, config.logFormat);
  /** Read Redis now; the text, and what could not be read (said on stderr). */
  const scrape = async () => {
    const collection = await collectLocks(config, keys);
    // "Seconds since the last success" counts to the server's clock, which stamped the history.
    const registry = buildRegistry(collection, serverNow(collection.clock));
    const text = await registry.metrics();
    const unreadable = collection.unreadable;
    if (output.kind === 'listen' && unreadable.length > 0)
      log.warn(`could not read ${unreadable.length} locks under ${config.prefix} (${unreadableSummary(unreadable)})`);
    return { text, contentType: registry.contentType, unreadable };
  };
  if (output.kind === 'listen') return serveMetrics(output.host, output.port, scrape, log);
  const { text, contentType, unreadable } = await scrape();
  if (output.kind === 'stdout') out.write(text);
  else if (output.kind === 'textfile') writeAtomically(output.path, text);
  else await pushMetrics(output.url, text, contentType, config.prefix);
  if (unreadable.length > 0)
    throw new UnavailableError(
      `could not read ${unreadable.length} locks under ${config.prefix} (${unreadableSummary(unreadable)}); ` +
        'the others were written',
    );
  return 0;
}
