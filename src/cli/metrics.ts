// dlock metrics: declared; its rules (one output, a loopback --listen by default) are in config (metricsConfig).

import type { Command } from 'commander';
import { metricsConfig, type RawOptions } from '../config/index.js';
import { HELP_AFTER } from './help.js';
import type { CommandLine } from './invocation.js';
import { connectionOptions, outputOptions } from './options.js';

/** `dlock metrics [options] [key...]`. */
export function declareMetrics(program: Command, cli: CommandLine): void {
  const metrics = program
    .command('metrics')
    .summary('Prometheus metrics of the locks under the prefix')
    .description(
      'Prometheus metrics of every held lock under the prefix and of each <key> named: held, holders, waiters, ' +
        'the last success, and counts and wait and hold times for the life of each key',
    )
    .argument('[key...]', 'lock names to report even when nobody holds them')
    .option('--only', 'report the named keys only, not every held lock (one file per team: no series repeated)')
    .option(
      '--textfile <file>',
      "write the metrics atomically to <file>, named *.prom (node_exporter's textfile collector); on failure " +
        'it gets dlock_metrics_collect_success 0',
    )
    .option('--push <url>', 'PUT the metrics to a Pushgateway (job dlock, grouped by prefix and host)')
    .option(
      '--listen <addr:port>',
      'serve them at /metrics until SIGTERM or SIGINT; a port alone listens on 127.0.0.1 only',
    );
  connectionOptions(outputOptions(metrics))
    .addHelpText('after', HELP_AFTER.metrics!)
    .action((keys: string[], options: RawOptions) => {
      const reporting = metricsConfig(keys, cli.withGlobals(options), cli.env);
      const run = async () => (await import('../commands/metrics.js')).metrics(reporting);
      cli.decide({ command: 'metrics', ...reporting, run });
    });
}
