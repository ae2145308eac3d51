// dlock doctor: declared; its rules are in config (doctorConfig).

import type { Command } from 'commander';
import { DEFAULTS, doctorConfig, type RawOptions } from '../config/index.js';
import { HELP_AFTER, helpWidth } from './help.js';
import type { CommandLine } from './invocation.js';
import { connectionOptions, jsonOption, outputOptions } from './options.js';

/** `dlock doctor [options]`. */
export function declareDoctor(program: Command, cli: CommandLine): void {
  const doctor = program
    .command('doctor')
    .summary('check the Redis deployment against what dlock needs')
    .description(
      'check each Redis against what dlock needs (eviction, persistence, replicas, ACL, TLS, version, clock, ' +
        'round trip)',
    )
    .option(
      '-t, --ttl <duration>',
      'the lease length your jobs use: the clock and round-trip limits scale with it ' +
        `(env DLOCK_TTL; default ${DEFAULTS.ttl})`,
    );
  connectionOptions(outputOptions(doctor, jsonOption))
    .addHelpText('after', HELP_AFTER.doctor!)
    .action((options: RawOptions) => {
      const checking = doctorConfig(cli.withGlobals(options), cli.env);
      const { config, json, ttlMs } = checking;
      // The text report is wrapped as --help is: to COLUMNS, the terminal, or 80 columns.
      const width = helpWidth(cli.env, process.stdout);
      const run = async () => (await import('../commands/doctor.js')).doctor(config, { json, ttlMs, width });
      cli.decide({ command: 'doctor', ...checking, run });
    });
}
