// dlock metrics [key...]: the locks under the prefix as Prometheus metrics, once (stdout, a
// textfile, a Pushgateway; exit 0, or 69 after writing when a lock could not be read) or served
// at /metrics until SIGTERM or SIGINT. Loaded only for this command: prom-client is not part of
// any other command's start-up.

import { basename } from 'node:path';
import type { MetricsConfig } from '../config/index.js';
import { UnavailableError } from '../errors.js';
import { storeNow } from '../backend/index.js';
import { Logger } from '../log.js';
import { stdout, type Output } from '../output.js';
import { unreadableSummary } from '../views/status-text.js';
import { collectLocks, invalidCountsSummary } from '../metrics/collect.js';
import { pushMetrics } from '../metrics/push.js';
import { buildRegistry, failedRegistry, type Origin } from '../metrics/registry.js';
import { serveMetrics } from '../metrics/serve.js';
import { writeAtomically } from '../metrics/textfile.js';

/** Collect and write the metrics once, or serve them (--listen); the exit status. */
export async function metrics({ config, keys, only, output }: MetricsConfig, out: Output = stdout): Promise<number> {
  const log = new Logger(config.verbosity, config.logFormat);
  // The dlock_metrics_* series say where they came from: two files of one host never repeat one.
  const origin: Origin = {
    prefix: config.prefix,
    ...(output.kind === 'textfile' ? { file: basename(output.path) } : {}),
  };
  /**
   * Read Redis now; the text, what could not be read (said on stderr), and the error when nothing
   * could be read at all: then the text is dlock_metrics_collect_success 0 alone.
   */
  const scrape = async () => {
    try {
      const collection = await collectLocks(config, keys, { only });
      // The age of the last success counts to the server's clock, which stamped it.
      const registry = buildRegistry(collection, storeNow(collection.clock), Date.now(), origin);
      const unreadable = collection.unreadable;
      if (output.kind === 'listen' && unreadable.length > 0)
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
      if (output.kind === 'listen') log.warn(`scrape failed: ${error.message}`);
      return { text: await registry.metrics(), contentType: registry.contentType, unreadable: [], failed: error };
    }
  };
  if (output.kind === 'listen') return serveMetrics(output.host, output.port, scrape, log);
  const { text, contentType, unreadable, failed } = await scrape();
  if (failed && output.kind === 'stdout') throw failed;
  if (output.kind === 'stdout') out.write(text);
  else if (output.kind === 'textfile') writeAtomically(output.path, text);
  else await pushMetrics(output.url, text, contentType, config.prefix);
  if (failed) throw failed;
  if (unreadable.length > 0)
    throw new UnavailableError(
      `could not read ${locks(unreadable.length)} under ${config.prefix} (${unreadableSummary(unreadable)}); ` +
        'the others were written',
    );
  return 0;
}

/** "1 lock", "2 locks". */
function locks(count: number): string {
  return `${count} ${count === 1 ? 'lock' : 'locks'}`;
}
