// What --help prints besides the options: its width, the environment, and each command's
// exit codes and examples. Kept apart from the other src/cli/ files, which declare the options themselves.

import { Help, type Command } from 'commander';
import type { Env } from '../config/index.js';
import { INSTALL_LINES } from '../completion/install.js';

/** Narrowest width wrapped to: a smaller COLUMNS is taken as 40. */
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

/**
 * commander's formatItem (an option or command and its description, side by side), except where
 * the description's column would be narrower than commander wraps (its minWidthToWrap: 24 here,
 * program.ts), or than its longest word (`redis+sentinel://h1,h2/<master>,` at COLUMNS=60): there
 * commander leaves the description unwrapped, or the word sticking out past the width. Here the
 * term gets its own line and the description follows, indented 6 and wrapped to the width, as GNU
 * tools do.
 */
export function formatItem(this: Help, term: string, termWidth: number, description: string, helper: Help): string {
  const width = this.helpWidth ?? DEFAULT_HELP_WIDTH;
  // commander's layout: 2 of indent, the term column, 2 between.
  const column = width - termWidth - 4;
  if (!description || (column >= this.minWidthToWrap && longestWord(description) <= column))
    return Help.prototype.formatItem.call(this, term, termWidth, description, helper);
  return `  ${term}\n${wrapWords(description, width - 6, '      ')}`;
}

const longestWord = (text: string) => Math.max(0, ...text.split(/\s+/).map((word) => word.length));

/** `text` broken between words into lines of at most `width` (a longer word stays whole), each after `indent`. */
export function wrapWords(text: string, width: number, indent = ''): string {
  const lines: string[] = [];
  for (const paragraph of text.split('\n')) {
    let line = '';
    for (const word of paragraph.split(/\s+/).filter(Boolean)) {
      if (line !== '' && line.length + 1 + word.length > width) {
        lines.push(line);
        line = word;
      } else line = line === '' ? word : `${line} ${word}`;
    }
    lines.push(line);
  }
  return lines.map((line) => (line === '' ? '' : indent + line)).join('\n');
}

/**
 * Help text as written out, fitted to `width`: a line too long for it (an "Exit status:" or
 * "Environment:" row, the usage line) is broken between words, a row's text kept in its column
 * (or, where that column would be under 20 or narrower than a word of it, below the row's term,
 * indented 6). The Examples are
 * left as written: command lines that cannot be broken, at most 73 columns (they fit 80).
 */
export function fitHelp(text: string, width: number): string {
  const at = text.search(/^Examples:$/m);
  const [body, examples] = at < 0 ? [text, ''] : [text.slice(0, at), text.slice(at)];
  return (
    body
      .split('\n')
      .map((line) => fitLine(line, width))
      .join('\n') + examples
  );
}

function fitLine(line: string, width: number): string {
  if (line.length <= width || !/\S\s+\S/.test(line.trim())) return line;
  // "  64             usage error ...": a term, two blanks or more, its text.
  const row = /^( {2}\S+(?: \S+)*? {2,})(\S.*)$/.exec(line);
  if (row && width - row[1].length >= Math.max(20, longestWord(row[2]))) {
    return wrapWords(row[2], width - row[1].length, ' '.repeat(row[1].length)).replace(/^ +/, row[1]);
  }
  if (row) return `${row[1].trimEnd()}\n${wrapWords(row[2], width - 6, '      ')}`;
  // Anything else (the usage line): continued under its first word's end.
  const lead = /^ *(\S+ )?/.exec(line)![0];
  return wrapWords(line.slice(lead.length), width - lead.length, ' '.repeat(lead.length)).replace(/^ +/, lead);
}

/** Exit codes every command that talks to Redis shares. */
const COMMON_EXITS: [string, string][] = [
  ['64', 'usage error (bad option, duration, key or URL)'],
  ['69', 'the store unreachable (Redis, etcd), or too few Redlock instances for a quorum'],
  ['70', 'internal error (a bug: please report it)'],
];

/** An "Exit status:" table, codes in a column. */
function exitStatus(rows: [string, string][]): string {
  const width = Math.max(...rows.map(([code]) => code.length)) + 2;
  return `\nExit status:\n${rows.map(([code, text]) => `  ${code.padEnd(width)}${text}`).join('\n')}\n`;
}

/**
 * "Examples:" from [comment, command lines...]. Each line at most 71 characters: the man page shows
 * them indented 7 in 78 columns at MANWIDTH=80 (scripts/build-man.mjs; test/cli/man.test.ts).
 */
function examples(items: [string, ...string[]][]): string {
  const shown = items.map(([comment, ...lines]) => [`# ${comment}`, ...lines].map((line) => `  ${line}`).join('\n'));
  return `\nExamples:\n${shown.join('\n\n')}\n`;
}

export const RUN_EXAMPLES = examples([
  [
    'crontab (PATH: dlock, and node for npm): skip if another host runs it',
    'PATH=/usr/local/bin:/usr/bin:/bin',
    'DLOCK_REDIS_URL=redis://redis.internal:6379',
    '*/5 * * * * dlock run -n -E 0 nightly-sync -- /opt/jobs/sync.sh',
  ],
  ['CI mutex: wait up to 10 minutes for the previous deploy', 'dlock run --wait 10m deploy-prod -- make deploy'],
  [
    'pass the fencing token to the resource, which rejects older tokens',
    'dlock run billing -- \\',
    '  sh -c \'curl -H "Fence: $DLOCK_FENCING_TOKEN" https://...\'',
  ],
]);

/** What --help prints after each command's options: its exit codes, then two or three examples. */
export const HELP_AFTER: Record<string, string> = {
  run:
    exitStatus([
      ["the command's", 'it exited normally'],
      ['128+N', 'it was killed by signal N'],
      ...COMMON_EXITS,
      ['75', 'busy: not acquired (-n, or --wait ran out); -E changes the code'],
      ['76', 'the lock was lost while the command ran (see --on-lost)'],
      ['124', 'stopped by dlock after --max-hold, or a missed --heartbeat'],
      ['126, 127', 'the command is not executable, or not found'],
    ]) + RUN_EXAMPLES,
  acquire:
    exitStatus([
      ['0', 'acquired: the export lines are on stdout'],
      ...COMMON_EXITS,
      ['75', 'busy: not acquired (-n, or --wait ran out); -E changes the code'],
      ['128+N', 'interrupted by signal N while waiting'],
    ]) +
    examples([
      [
        'a section: exit if not acquired; the trap tells --ping the status',
        'eval "$(dlock acquire --wait 10m deploy)" || exit',
        "trap 's=$?; wait; dlock release --exit-status $s deploy' EXIT",
        './step1 && ./step2',
      ],
      [
        'steps on different machines: nothing renews; later steps get the token',
        'lock=$(dlock acquire --no-keeper --ttl 30m --json deploy) || exit',
        'TOKEN=$(echo "$lock" | jq -r .token)',
        'dlock renew --token "$TOKEN" deploy',
        'dlock release --token "$TOKEN" deploy',
      ],
    ]),
  renew:
    exitStatus([
      ['0', 'renewed for another --ttl'],
      ...COMMON_EXITS,
      ['76', "no longer this owner's: it expired or was taken"],
    ]) +
    examples([
      ['in a step of a section dlock acquire started (token from DLOCK_TOKEN)', 'dlock renew deploy'],
      ['in a later CI job, with the token the first one saved', 'dlock renew --token "$DEPLOY_TOKEN" deploy'],
    ]),
  heartbeat:
    exitStatus([
      ['0', 'delivered (or the calling dlock has no --heartbeat: nothing to tell)'],
      ['64', 'not under a dlock (no DLOCK_KEY and DLOCK_TOKEN)'],
      ['76', 'its dlock has ended (its heartbeat file is gone), or [key] is not its key'],
    ]) +
    examples([
      [
        'a job that proves progress each loop',
        'dlock run --heartbeat 5m k -- \\',
        "  sh -c 'while ./step; do dlock heartbeat; done'",
      ],
    ]),
  status:
    exitStatus([
      ['0', 'held (without a key: at least one lock is held)'],
      ['1', 'free (without a key: none is held)'],
      ...COMMON_EXITS,
    ]) +
    examples([
      ['who holds it, and who waits in line', 'dlock status deploy-prod'],
      ['every held lock under the prefix, as JSON', 'dlock status --json'],
      ['a script that only asks whether it is held', 'if dlock status nightly-sync >/dev/null; then echo busy; fi'],
    ]),
  release:
    exitStatus([
      ['0', 'released (with --force: removed whoever held it)'],
      ['1', 'with --force: nothing was held'],
      ...COMMON_EXITS,
      ['76', "no longer this owner's: it expired or was taken meanwhile"],
    ]) +
    examples([
      ['end a section, giving --ping and the history its exit status', 'dlock release --exit-status $? deploy'],
      ['take a stuck lock from whoever holds it, once you know it is dead', 'dlock release --force nightly-sync'],
      ['open it to new holders at once (the old command may still run)', 'dlock release --force --now nightly-sync'],
    ]),
  hold:
    exitStatus([
      ['0', 'held: one line on stdout says until when'],
      ...COMMON_EXITS,
      ['75', 'busy: held by another (-n, the default, or --wait ran out); -E changes the code'],
      ['128+N', 'interrupted by signal N while waiting'],
    ]) +
    examples([
      ['a freeze until 18:00 (local time)', "dlock hold --reason 'release 4.2 freeze' --until 18:00 deploy-prod"],
      [
        'queue a freeze behind the running deploy, for two hours',
        "dlock hold --wait 30m --for 2h --reason 'db migration' deploy-prod",
      ],
    ]),
  unhold:
    exitStatus([
      ['0', 'the hold ended'],
      ['1', 'not held (or the hold ended meanwhile): nothing to unhold'],
      ['64', "also: held by a process, not a hold (see release --force); another user's hold without --force"],
      ...COMMON_EXITS.slice(1),
    ]) +
    examples([
      ['end your freeze', 'dlock unhold deploy-prod'],
      ["end someone else's (recorded as taken, with your name)", 'dlock unhold --force deploy-prod'],
    ]),
  history:
    exitStatus([['0', 'events shown'], ['1', 'the key has no history'], ...COMMON_EXITS]) +
    examples([
      ["the key's last 20 events: who held it, how long, how it ended", 'dlock history nightly-sync'],
      ['the last 100, as JSON', 'dlock history --count 100 --json nightly-sync'],
    ]),
  doctor:
    exitStatus([['0', 'no check failed (WARNs allowed)'], ['1', 'at least one check failed'], ...COMMON_EXITS]) +
    examples([
      ['check the Redis in DLOCK_REDIS_URL for 30s leases', 'dlock doctor'],
      [
        'a Redlock quorum of three, for jobs with a 5 minute lease',
        'dlock doctor -t 5m --redis redis://a --redis redis://b --redis redis://c',
      ],
    ]),
  metrics:
    exitStatus([
      ['0', 'metrics written (with --listen: stopped by SIGTERM or SIGINT)'],
      ['64', COMMON_EXITS[0][1]],
      ['69', 'the store unreachable (a --textfile says so), a lock unreadable, --push failed'],
      ['70', COMMON_EXITS[2][1]],
      ['73', '--textfile could not be written, or --listen could not listen (port taken)'],
    ]) +
    examples([
      ['every held lock under the prefix, and nightly-sync even when free', 'dlock metrics nightly-sync'],
      [
        "crontab: node_exporter's textfile collector, every minute",
        'PATH=/usr/local/bin:/usr/bin:/bin',
        'DLOCK_REDIS_URL=redis://redis.internal:6379',
        'TEXTFILE=/var/lib/node_exporter/textfile/dlock.prom',
        '* * * * * dlock metrics --textfile "$TEXTFILE" nightly-sync backup',
      ],
      ['a scrape endpoint on 127.0.0.1:9464/metrics', 'dlock metrics --listen 9464'],
    ]),
  serve:
    exitStatus([
      ['0', 'stopped by SIGTERM or SIGINT'],
      ['64', COMMON_EXITS[0][1]],
      ['69', '--listen could not listen (the port taken, the address not here)'],
      ['70', COMMON_EXITS[2][1]],
    ]) +
    examples([
      ['the board on http://127.0.0.1:9470/', 'dlock serve'],
      ['on another port, for a proxy that asks who you are', 'dlock serve --listen 127.0.0.1:8080'],
    ]),
  completion:
    exitStatus([
      ['0', 'the script is on stdout'],
      ['64', 'not bash, zsh or fish'],
    ]) + examples([...Object.entries(INSTALL_LINES).map(([shell, lines]): [string, ...string[]] => [shell, ...lines])]),
};

/** Variables that no single option names as its default, for the Environment section of --help. */
const MORE_ENVIRONMENT: [string, string][] = [
  ['DLOCK_REDIS_PASSWORD', 'password for every Redis URL that has none of its own'],
  ['DLOCK_SENTINEL_PASSWORD', 'password of the sentinels (redis+sentinel://)'],
  ['DLOCK_ETCD_PASSWORD', 'password for etcd:// and etcds:// URLs that have none of their own'],
  ['CI', 'when set, status lines while waiting, never a spinner'],
  ['DLOCK_KEY, DLOCK_TOKEN', 'the command gets them: renew, release use that lock'],
  ['DLOCK_HELD', 'enclosing locks: renew and release find tokens there'],
  ['COLUMNS', 'width of --help and doctor: else the terminal, or 80'],
  ['NO_COLOR', 'when set and not empty, the spinner has no colour'],
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
