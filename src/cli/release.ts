// dlock release: declared; its rules (--force with --token, --now, --slot, --exit-status, the token) are in
// config (releaseConfig).

import type { Command } from 'commander';
import { releaseConfig, type RawOptions } from '../config/index.js';
import { HELP_AFTER } from './help.js';
import type { CommandLine } from './invocation.js';
import { connectionOptions, keyAfterOptions, outputOptions } from './options.js';

/** `dlock release [options] <key>`. */
export function declareRelease(program: Command, cli: CommandLine): void {
  const release = program
    .command('release')
    .summary("release your lock, or with --force anyone's")
    .description(
      'release your own lock (owner token from --token or DLOCK_TOKEN) and stop its keeper; with --force, take ' +
        'it from whoever holds it and print whom it removed. A nested section (DLOCK_NESTED) releases nothing: ' +
        'the holder that took the lock releases it',
    )
    .argument('<key>', 'lock name')
    .option(
      '--token <token>',
      "the owner token (default: DLOCK_TOKEN when DLOCK_KEY names <key>, else <key>'s entry in DLOCK_HELD)",
    )
    .option(
      '--exit-status <n>',
      "the section's exit status (0-255; e.g. $? in a trap on EXIT): history, --ping and --on-event report it " +
        '(without it: unknown, never a success)',
    )
    .option(
      '-f, --force',
      'really take the lock from whoever holds it; it stays closed to new holders until that lease runs out',
    )
    .option('--now', 'with --force: open the lock to new holders at once (the removed command may still be running)')
    .option('--slot <n>', 'with --force: remove only the holder of this slot of a --slots lock');
  keyAfterOptions(release);
  connectionOptions(outputOptions(release))
    .addHelpText('after', HELP_AFTER.release!)
    .action((key: string, options: RawOptions) => {
      const releasing = releaseConfig(key, cli.withGlobals(options), cli.env);
      const { config, key: validKey, ...how } = releasing;
      const run = async () => (await import('../commands/release.js')).release(config, validKey, how);
      cli.decide({ command: 'release', ...releasing, run });
    });
}
