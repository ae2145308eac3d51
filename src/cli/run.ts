// dlock run: the command line of the main command, declared; its rules are in config (runConfig).

import type { Command } from 'commander';
import { DEFAULTS, runConfig, type RawOptions } from '../config/index.js';
import { UsageError } from '../errors.js';
import { HELP_AFTER } from './help.js';
import type { CommandLine } from './invocation.js';
import {
  connectionOptions,
  flockHints,
  GROUP,
  jobBoundOptions,
  keyAfterOptions,
  lockOptions,
  monitoringOptions,
  onLostOption,
  signalOption,
  outputOptions,
  waitChoice,
  waitingOptions,
} from './options.js';

/**
 * Everything after the key is the command (docs/reference/commands.md): an optional "--", then
 * the command word. A word starting with "-" right after the key is an option in the wrong
 * place, not a command, so it is refused rather than run.
 */
function commandAfterKey(key: string, words: string[]): string[] {
  if (words[0] === '--') return words.slice(1);
  if (words[0]?.startsWith('-')) {
    throw new UsageError(
      `${JSON.stringify(words[0])} comes after the key ${JSON.stringify(key)}: options go before the key, and ` +
        'everything after it is the command (dlock run [options] <key> [--] <command> [args...])',
    );
  }
  return words;
}

/** `dlock run [options] <key> -- <command> [args...]`. */
export function declareRun(program: Command, cli: CommandLine): void {
  const run = program
    .command('run')
    .summary('run a command while holding <key>')
    .description(
      'acquire <key>, run the command while renewing the lock, release it once every process of the command ' +
        "(background ones too) is gone; exit with the command's status",
    )
    .usage('[options] <key> -- <command> [args...]')
    .argument('<key>', 'lock name')
    .argument('[command...]', 'the command and its arguments: everything after the key (the -- is optional)')
    .passThroughOptions();
  lockOptions(run).option(
    '--once-per <duration>',
    "after an exit 0, the key is done until that run's start + duration (server time): every --once-per run " +
      'until then exits with the conflict code (crontabs on several hosts)',
  );
  jobBoundOptions(
    waitingOptions(run)
      .optionsGroup(GROUP.command)
      .addOption(onLostOption('the command'))
      .addOption(signalOption('the command'))
      .option(
        '--kill-after <duration>',
        'grace between the --signal (default TERM) and SIGKILL, at most ttl/3 ' +
          `(default ${DEFAULTS.killAfter}, capped at ttl/3)`,
      ),
    'the command',
    '(the --signal, SIGKILL after --kill-after) and release the lock; exit 124',
  ).option('--no-cmd-metadata', 'do not store the command line in the lock (for commands that carry secrets)');
  flockHints(connectionOptions(outputOptions(monitoringOptions(run)))).addHelpText('after', HELP_AFTER.run!);
  keyAfterOptions(run);
  const runWait = waitChoice(run);
  run.action((key: string | undefined, words: string[], options: RawOptions) => {
    const raw = runWait(options);
    // `dlock run -- -key -- cmd`: a key starting with "-" comes after a first "--"; read after the options.
    const command = () => commandAfterKey(key!, words);
    const dashes = cli.argv.indexOf('--');
    const keyAfterDashes = dashes >= 0 && cli.argv[dashes + 1] === key && words.length === 0;
    const config = runConfig(key, command, cli.withGlobals(raw), cli.env, keyAfterDashes);
    cli.decide({ command: 'run', config, run: async () => (await import('../commands/run.js')).run(config, cli.env) });
  });
}
