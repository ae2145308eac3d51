// dlock completion, and the hidden __complete-keys its scripts call for lock names.

import { Argument, type Command } from 'commander';
import { HELP_AFTER } from './help.js';
import type { CommandLine, Shell } from './invocation.js';

/** `dlock completion <shell>`: the shell is one of three, which commander checks. */
export function declareCompletion(program: Command, cli: CommandLine): void {
  program
    .command('completion')
    .description('print a shell completion script')
    .addHelpText('after', HELP_AFTER.completion!)
    .addArgument(new Argument('<shell>', 'bash, zsh or fish').choices(['bash', 'zsh', 'fish']))
    .action((shell: Shell) => {
      cli.decide({
        command: 'completion',
        shell,
        run: async () => (await import('../commands/completion.js')).completion(shell),
      });
    });
}

/** Lock names for the completion scripts (commands/complete-keys.ts): not for users, not in --help. */
export function declareCompleteKeys(program: Command, cli: CommandLine): void {
  program
    .command('__complete-keys', { hidden: true })
    .argument('[prefix]', 'the start of the name', '')
    .action((prefix: string) => {
      const run = async () => (await import('../commands/complete-keys.js')).completeKeysFromEnv(cli.env, prefix);
      cli.decide({ command: 'complete-keys', run });
    });
}
