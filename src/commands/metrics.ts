// dlock metrics [key...]: the locks under the prefix as Prometheus metrics, once (stdout, a
// textfile, a Pushgateway; exit 0, or 69 after writing when a lock could not be read) or served
// at /metrics until SIGTERM or SIGINT. Loaded only for this command: prom-client is not part of
// any other command's start-up.

import type { MetricsConfig } from '../config/index.js';
import { UnavailableError } from '../errors.js';
import { Logger } from '../log.js';
import { stdout, type Output } from '../output.js';
import { unreadableSummary } from '../views/status-text.js';
import { pushMetrics } from '../metrics/push.js';
import { locks, scraper } from '../metrics/scrape.js';
import { serveMetrics } from '../metrics/serve.js';
import { writeAtomically } from '../metrics/textfile.js';

/** Collect and write the metrics once, or serve them (--listen); the exit status. */
export async function metrics({ config, keys, only, output }: MetricsConfig, out: Output = stdout): Promise<number> {
  const log = new Logger(config.verbosity, config.logFormat);
  const scrape = scraper(config, keys, { only, output, log });
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
