// Render man/dlock.1 from the same sources as --help and the README: the commands and options
// from the commander program's description (src/completion/describe.ts, as the completions),
// the environment and examples from the built CLI's help, the README's "Exit codes" table, and
// the date of this version's CHANGELOG heading, so that none of them can drift.
//
//   node scripts/build-man.mjs           write man/dlock.1 (after `npm run build`)
//   node scripts/build-man.mjs --check   exit 1 if man/dlock.1 is not what it would write

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadSource } from './load-source.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const page = join(root, 'man/dlock.1');

const CHILD_ENVIRONMENT = [
  ['DLOCK_KEY', "the lock's name as given"],
  [
    'DLOCK_FENCING_TOKEN',
    'decimal string, greater than every token issued before for this key; ' +
      'a protected resource should reject lower ones',
  ],
  ['DLOCK_TOKEN', 'the random owner token; a nested dlock run on the same key runs under the lock it already holds'],
  ['DLOCK_TTL_MS', 'the lease length in milliseconds'],
  [
    'DLOCK_SLOT',
    "with --slots n: the holder's slot, 0 to n-1 (the lowest one free when it was granted); " +
      'not set for an exclusive or --shared lock',
  ],
  ['DLOCK_HEARTBEAT_FILE', 'with --heartbeat: the file dlock heartbeat touches'],
  [
    'DLOCK_HEARTBEAT_ENCLOSING',
    'with --heartbeat under enclosing dlocks that watch one: their heartbeat files, colon-separated; ' +
      'dlock heartbeat touches them too',
  ],
  [
    'DLOCK_HEARTBEAT_MS',
    'with --heartbeat: how often, at the least, the command must run dlock heartbeat, in milliseconds ' +
      "(as systemd's WATCHDOG_USEC); under enclosing dlocks that watch one, the shortest of them all",
  ],
];

const ACQUIRE_NESTED = [
  [
    'DLOCK_NESTED',
    "the enclosing holder's token: a dlock release of it releases nothing, and the holder that took " +
      'the lock releases it when it ends',
  ],
];

// Where src/runtime-dir.ts and src/keeper/runtime.ts keep what a keeper (dlock acquire) leaves on this host.
const FILES = [
  [
    '$XDG_RUNTIME_DIR/dlock/',
    'the runtime directory (without XDG_RUNTIME_DIR: $TMPDIR/dlock-<uid>/, ' +
      "TMPDIR defaulting to /tmp), mode 0700 and only this user's; dlock uses none that another user " +
      'could write to. It holds keeper-<hash>.pid, the pid of each running keeper, by which dlock release ' +
      'stops the keeper of the lock it releases.',
  ],
  [
    '$XDG_RUNTIME_DIR/dlock/keeper.log',
    'JSON lines a keeper appends once the stderr it was started with ' +
      'is gone (the shell closed): a lost lock, a failed renewal or release.',
  ],
];

/** `dlock [args]` as the built bundle prints it. */
function help(args) {
  const env = { PATH: process.env.PATH ?? '' };
  return execFileSync(process.execPath, [join(root, 'dist/dlock.cjs'), ...args], { encoding: 'utf8', env });
}

/** Commander's help text split into its parts: usage, description, and titled sections. */
function parseHelp(text) {
  const [usageLine, ...rest] = text.trimEnd().split('\n');
  const blocks = rest
    .join('\n')
    .trim()
    .split(/\n(?=[A-Z][A-Za-z ]*:\n)/);
  const description = blocks[0].includes(':\n')
    ? ''
    : blocks
        .shift()
        .replace(/\s*\n\s*/g, ' ')
        .trim();
  const sections = Object.fromEntries(
    blocks.map((block) => {
      const [title, ...lines] = block.split('\n');
      return [title.replace(/:$/, ''), lines];
    }),
  );
  return { usage: usageLine.replace(/^Usage: /, ''), description, sections };
}

/** Two-column entries ("  --ttl <d>   lease length...", wrapped lines indented further). */
function entries(lines) {
  const result = [];
  for (const line of lines ?? []) {
    const start = /^ {2}(\S.*?)(?: {2,}(.*))?$/.exec(line);
    if (start && !line.startsWith('   ')) result.push([start[1], start[2] ?? '']);
    else if (line.trim() && result.length) result.at(-1)[1] += ` ${line.trim()}`;
  }
  return result;
}

/** roff-escape text: backslashes, hyphens (so they copy-paste as ASCII), leading dots. */
function esc(text) {
  return text
    .replace(/\\/g, '\\e')
    .replace(/-/g, '\\-')
    .replace(/^([.'])/gm, '\\&$1');
}

/** "-t, --ttl <duration>" -> bold flags, italic placeholders. */
function flags(text) {
  return esc(text)
    .replace(/<([^>]+)>/g, '\\fI$1\\fR')
    .replace(/(^|, )(\\-[^ ,]+)/g, '$1\\fB$2\\fR');
}

function tagged(list, format = esc) {
  return list.map(([tag, text]) => `.TP\n${format(tag)}\n${esc(text)}`).join('\n');
}

/** An option as --help's left column shows it, and its text with the choices. */
function optionEntry(option) {
  const term = `${option.short ? `${option.short}, ` : ''}${option.long}${option.value ? ` <${option.value}>` : ''}`;
  const choices = option.choices ? ` (one of: ${option.choices.join(', ')})` : '';
  return [term, `${option.description}${choices}`];
}

/** The README's "Exit codes" section: its table cell for cell (backticks dropped), and the text after it. */
function exitCodes() {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const section = readme.split(/^## Exit codes\n/m)[1]?.split(/^## /m)[0];
  if (!section) throw new Error('build-man: README.md has no "## Exit codes" section');
  const lines = section.split('\n');
  const plain = (text) => text.replace(/`/g, '').replace(/\\\|/g, '|').trim();
  // The rows after the header and the |---| line; a cell may hold an escaped "\|".
  const rows = lines.filter((line) => line.startsWith('|')).slice(2);
  const table = rows.map((row) =>
    row
      .slice(1, -1)
      .split(/(?<!\\)\|/)
      .map(plain),
  );
  const quoted = (text) => plain(text.replace(/`([^`]+)`/g, '"$1"'));
  const last = lines.findLastIndex((line) => line.startsWith('|'));
  const after = lines
    .slice(last + 1)
    .map(quoted)
    .filter(Boolean)
    .join(' ');
  return { table, after };
}

/** The date of this version's CHANGELOG heading ("## [0.2.0] - 2026-12-02"), or "Unreleased". */
function releaseDate(version) {
  const changelog = readFileSync(join(root, 'CHANGELOG.md'), 'utf8');
  const escaped = version.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const dated = new RegExp(`^## \\[?v?${escaped}\\]?\\s*(?:-|\u2013|\\()\\s*(\\d{4}-\\d{2}-\\d{2})`, 'm');
  const heading = dated.exec(changelog);
  if (heading) return heading[1];
  if (/^## \[?Unreleased\]?\s*$/im.test(changelog)) return 'Unreleased';
  throw new Error(`build-man: CHANGELOG.md has no dated heading for ${version} and no "## Unreleased"`);
}

/** Each block of examples once: dlock's own, then each command's that are not the same. */
function examples(top, commands) {
  const blocks = [['', top.sections.Examples]];
  for (const command of commands) {
    const lines = command.help.sections.Examples;
    if (lines && !blocks.some(([, seen]) => seen?.join('\n') === lines.join('\n'))) blocks.push([command.name, lines]);
  }
  return blocks
    .filter(([, lines]) => lines)
    .map(([name, lines]) => {
      const text = esc(
        lines
          .map((line) => line.replace(/^ {2}/, ''))
          .join('\n')
          .trim(),
      );
      // At the section's own indent (7): src/cli/help.ts keeps each line to 71 characters for it.
      return `${name ? `.SS dlock ${name}\n` : ''}.nf\n${text}\n.fi`;
    });
}

async function render() {
  const { describeDlock } = await loadSource('src/cli/describe.ts');
  const spec = describeDlock();
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const exit = exitCodes();
  const top = parseHelp(help(['--help']));
  const commands = spec.commands
    .filter((c) => c.name !== 'help')
    .map((c) => ({ ...c, help: parseHelp(help(['help', c.name])) }));
  return [
    '.\\" Generated by scripts/build-man.mjs from the commander program, `dlock --help` and the README; do not edit.',
    `.TH DLOCK 1 "${releaseDate(version)}" "dlock-cli ${version}" "User Commands"`,
    '.SH NAME',
    `dlock \\- ${esc(top.description)}`,
    '.SH SYNOPSIS',
    commands.map((c) => `.B dlock ${c.name}\n${esc(c.usage)}`).join('\n.br\n'),
    '.br\n.B dlock \\-\\-version\n.br\n.B dlock help\n[command]',
    '.SH DESCRIPTION',
    esc(
      'dlock wraps any command, holds a Redis lock for exactly as long as that command runs, renews it every ' +
        'ttl/3, and releases it when the command exits. The command is given as an argument vector; it is never ' +
        'passed through a shell unless you write sh -c yourself.',
    ),
    '.PP',
    esc(
      "Parsing is flock's: the options of dlock come before the key, and everything after the key is the " +
        "command's, with or without --, so dlock run k make -n runs make -n. A word starting with - right after " +
        'the key is a usage error: write the option before the key, or a command whose name starts with - after ' +
        '--. A key starting with - goes after a first --, as in dlock run -- -key -- cmd. -q and -v may also come ' +
        'before the command name (dlock -v run ...).',
    ),
    '.SH COMMANDS',
    ...commands.map((c) =>
      [
        `.SS dlock ${esc(`${c.name} ${c.usage}`)}`,
        esc(c.description),
        c.arguments.length
          ? `.PP\nArguments:\n${tagged(
              c.arguments.map((a) => [a.name, a.description]),
              (t) => `.I ${esc(t)}`,
            )}`
          : '',
        `.PP\nOptions:\n${tagged(c.options.map(optionEntry), flags)}`,
      ]
        .filter(Boolean)
        .join('\n'),
    ),
    '.SH EXIT STATUS',
    tagged(exit.table, (t) => `.B ${esc(t)}`),
    exit.after ? `.PP\n${esc(exit.after)}` : '',
    '.SH ENVIRONMENT',
    tagged(entries(top.sections.Environment), (t) => `.B ${t}`),
    '.PP\nThe command run by dlock run gets:',
    tagged(CHILD_ENVIRONMENT, (t) => `.B ${t}`),
    '.PP\ndlock acquire prints the same variables as export lines; inside a holder of the key (a nested acquire) also:',
    tagged(ACQUIRE_NESTED, (t) => `.B ${t}`),
    '.SH FILES',
    tagged(FILES, (t) => `.I ${esc(t)}`),
    '.SH EXAMPLES',
    ...examples(top, commands),
    '.SH SEE ALSO',
    '.BR flock (1),',
    '.BR timeout (1),',
    '.BR etcdctl (1)',
    '',
  ].join('\n');
}

const text = await render();
if (process.argv.includes('--check')) {
  const current = existsSync(page) ? readFileSync(page, 'utf8') : '';
  if (current !== text) {
    console.error(
      'build-man: man/dlock.1 is out of date with the program, --help, the README or the CHANGELOG: ' +
        'run `npm run build:man`',
    );
    process.exit(1);
  }
} else {
  mkdirSync(join(root, 'man'), { recursive: true });
  writeFileSync(page, text);
}
