// What --help prints besides the options: its width, the environment, and each command's
// exit codes and examples. Kept apart from cli.ts, which declares the options themselves.

import type { Command } from 'commander';
import type { Env } from './config.js';

/** Narrowest width worth wrapping to; below it a line is left as it is. */
const MIN_HELP_WIDTH = 40;
const DEFAULT_HELP_WIDTH = 80;

/**
 * Columns to wrap --help to: $COLUMNS when set (as GNU tools honour it), else the terminal's
 * width, else 80 (a pipe, a file, CI).
 */
export function helpWidth(env: Env, stream: NodeJS.WriteStream): number {
  const columns = Number(env.COLUMNS);
  if (env.COLUMNS && Number.isInteger(columns) && columns > 0) return Math.max(MIN_HELP_WIDTH, columns);
  if (stream.isTTY && stream.columns > 0) return Math.max(MIN_HELP_WIDTH, stream.columns);
  return DEFAULT_HELP_WIDTH;
}

export const RUN_EXAMPLES = `
Examples:
  # crontab: skip quietly when another host is still running it
  */5 * * * * dlock run -n -E 0 nightly-sync -- /opt/jobs/sync.sh

  # CI mutex: wait up to 10 minutes for the previous deploy
  dlock run --wait 10m deploy-prod -- make deploy

  # nested use: a script that holds the lock may call dlock on it again
  dlock run db-migrate -- sh -c 'dlock run db-migrate -- ./migrate.sh'

  # pass the fencing token to the resource, which rejects older tokens
  dlock run billing -- \\
    sh -c 'curl -H "Fence: $DLOCK_FENCING_TOKEN" https://...'

  # through Redis Sentinel, following failovers
  dlock run --redis redis+sentinel://s1:26379,s2:26379,s3:26379/mymaster \\
    job -- ./job.sh

  # Redlock across three independent Redis servers
  dlock run --redis redis://a:6379 --redis redis://b:6379 \\
    --redis redis://c:6379 job -- ./job.sh
`;

export const ACQUIRE_EXAMPLES = `
Examples:
  # part of a shell script (flock's fd mode): held until release or until
  # the shell exits
  eval "$(dlock acquire --wait 10m deploy)"
  ./step1 && ./step2
  dlock release deploy

  # steps on different machines: nothing renews; pass DLOCK_TOKEN on to the
  # later steps
  dlock acquire --no-keeper --ttl 30m --format json deploy
  dlock renew --token "$TOKEN" deploy
  dlock release --token "$TOKEN" deploy
`;

/** Variables that no single option names as its default, for the Environment section of --help. */
const MORE_ENVIRONMENT: [string, string][] = [
  ['DLOCK_REDIS_PASSWORD', 'password for every Redis URL that has none of its own'],
  ['DLOCK_SENTINEL_PASSWORD', 'password of the sentinels (redis+sentinel://)'],
  ['CI', 'when set, never a waiting spinner'],
];

/** "Environment:" for --help: each DLOCK_* variable an option's help names as "env X", then the rest. */
export function environmentHelp(program: Command): string {
  const variables = new Map<string, string>();
  for (const option of program.commands.flatMap((command) => command.options)) {
    const variable = /\benv (DLOCK_[A-Z_]+)/.exec(option.description)?.[1];
    if (variable && !variables.has(variable)) variables.set(variable, `default for ${option.long}`);
  }
  for (const [variable, text] of MORE_ENVIRONMENT) variables.set(variable, text);
  const width = Math.max(...[...variables.keys()].map((name) => name.length)) + 2;
  return `\nEnvironment:\n${[...variables].map(([name, text]) => `  ${name.padEnd(width)}${text}`).join('\n')}`;
}
