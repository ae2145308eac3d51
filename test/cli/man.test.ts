// The man page as `man dlock` shows it: generated from the same program as --help and the
// completions (so every option is in it), with acquire's examples, DLOCK_SLOT, FILES and the date
// of this version's CHANGELOG heading; rendered by groff without a warning.

import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';
import { dlock } from '../helpers/cli.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PAGE = join(ROOT, 'man/dlock.1');

/** The page as plain text, one paragraph a line (wide, not hyphenated), and groff's warnings. */
function rendered(): { text: string; warnings: string } {
  const wide = ['-rLL=400n', '-rHY=0', '-P-cbou'];
  const groff = spawnSync('groff', ['-man', '-Tutf8', '-ww', ...wide, PAGE], { encoding: 'utf8' });
  expect(groff.status).toBe(0);
  return { text: groff.stdout, warnings: groff.stderr };
}

/** The lines of section `title` (up to the next one). */
function section(text: string, title: string): string {
  return text.split(new RegExp(`^${title}$`, 'm'))[1]!.split(/^[A-Z][A-Z ]+$/m)[0]!;
}

test('its date is the date of this version in the CHANGELOG (or Unreleased before it has one), as built', () => {
  const result = spawnSync(process.execPath, [join(ROOT, 'scripts/build-man.mjs'), '--check'], { encoding: 'utf8' });
  expect(result.stderr).toBe('');
  expect(result.status).toBe(0);
  const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  const date = /^\.TH DLOCK 1 "([^"]*)"/m.exec(readFileSync(PAGE, 'utf8'))?.[1];
  const changelog = readFileSync(join(ROOT, 'CHANGELOG.md'), 'utf8');
  const heading = changelog.split('\n').find((line) => line.startsWith('## ') && line.includes(version));
  if (heading) expect(heading).toContain(date);
  else expect([date, changelog]).toEqual(['Unreleased', expect.stringMatching(/^## \[?Unreleased\]?$/m)]);
  expect(date).toMatch(/^(\d{4}-\d{2}-\d{2}|Unreleased)$/);
});

test("every option and example of every command's --help is in COMMANDS and EXAMPLES (acquire's too)", async () => {
  const { text } = rendered();
  const [commands, examples] = [section(text, 'COMMANDS'), section(text, 'EXAMPLES')];
  expect(examples).toContain('eval "$(dlock acquire --wait 10m deploy)"');
  for (const command of ['run', 'acquire', 'renew', 'status', 'release', 'history', 'doctor', 'completion']) {
    const { stdout } = await dlock(['help', command]);
    const own = commands.split(new RegExp(`^ {3}dlock ${command} `, 'm'))[1]!.split(/^ {3}dlock /m)[0]!;
    for (const [, flag] of stdout.matchAll(/^ {2}((?:-\w, )?--[\w-]+)/gm)) {
      expect(own, `dlock ${command} ${flag}`).toContain(flag);
    }
    const lines = (stdout.split(/^Examples:\n/m)[1] ?? '')
      .split(/^\S/m)[0]!
      .split('\n')
      .map((line) => line.trim());
    for (const line of lines.filter(Boolean)) expect(examples, `dlock ${command}: ${line}`).toContain(line);
  }
});

test('ENVIRONMENT names DLOCK_SLOT among what the command gets; FILES the runtime directory and keeper.log', () => {
  const { text, warnings } = rendered();
  expect(warnings).toBe('');
  expect(section(text, 'ENVIRONMENT')).toMatch(/^ +DLOCK_SLOT\n +with --slots n: the holder's slot/m);
  const files = section(text, 'FILES');
  expect(files).toMatch(/^ +\$XDG_RUNTIME_DIR\/dlock\/\n +the runtime directory \(without XDG_RUNTIME_DIR: /m);
  expect(files).toContain('$TMPDIR/dlock-<uid>/');
  expect(files).toMatch(/^ +\$XDG_RUNTIME_DIR\/dlock\/keeper\.log\n +JSON lines a keeper appends/m);
});

test('fits in 80 columns as `man` shows it at MANWIDTH=80 (EXAMPLES included)', () => {
  const man = spawnSync('man', [PAGE], {
    encoding: 'utf8',
    env: { ...process.env, MANWIDTH: '80', MANPAGER: 'cat', PAGER: 'cat', MAN_KEEP_FORMATTING: '' },
  });
  expect(man.status).toBe(0);
  const long = man.stdout.split('\n').filter((line) => line.length > 80);
  expect(long).toEqual([]);
  expect(man.stdout).toContain('EXAMPLES');
});

test('ENVIRONMENT names COLUMNS, NO_COLOR, and the DLOCK_KEY and DLOCK_TOKEN renew and release read', () => {
  const environment = section(rendered().text, 'ENVIRONMENT');
  expect(environment).toMatch(/^ +COLUMNS\n +.*--help.*doctor/m);
  expect(environment).toMatch(/^ +NO_COLOR\n +.*colour/m);
  expect(environment).toMatch(/^ +DLOCK_KEY, DLOCK_TOKEN\n +.*renew.*release/m);
});

test('SEE ALSO names flock(1), timeout(1) and etcdctl(1)', () => {
  const seeAlso = rendered().text.split(/^SEE ALSO$/m)[1]!;
  for (const page of ['flock(1)', 'timeout(1)', 'etcdctl(1)']) expect(seeAlso).toContain(page);
});

test("the zsh example keeps the user's own compinit: fpath goes to ~/.zshenv, read before ~/.zshrc", () => {
  const examples = section(rendered().text, 'EXAMPLES');
  expect(examples).toContain("echo 'fpath=(~/.zfunc $fpath)' >> ~/.zshenv");
  // A compinit is appended only to a ~/.zshrc that has none.
  const appends = [...examples.matchAll(/^.*compinit.*>> ~\/\.zshrc$/gm)].map((match) => match.index);
  expect(appends).toHaveLength(1);
  expect(examples.slice(0, appends[0]).trimEnd()).toMatch(/\n *grep -qs compinit ~\/\.zshrc \|\|$/);
});

test("the textfile crontab is the monitoring guide's, keys and path", () => {
  const examples = section(rendered().text, 'EXAMPLES');
  const guide = readFileSync(join(ROOT, 'docs/guides/monitoring.md'), 'utf8');
  const cron = guide
    .split(/^### node_exporter's textfile collector$/m)[1]!
    .split(/^```cron\n/m)[1]!
    .split(/^```$/m)[0]!;
  const lines = cron.split('\n').filter(Boolean);
  expect(lines.some((line) => /--textfile .* nightly-sync/.test(line))).toBe(true);
  for (const line of lines) expect(examples).toContain(line);
});

test("EXIT STATUS's 124 says what exit-codes.md says of an acquire section's shell (143 by the signal; 124 recorded)", () => {
  // Issue 31 (review): the man page's 124 (from the README's table) left the section's shell out.
  const codes = readFileSync(join(ROOT, 'docs/reference/exit-codes.md'), 'utf8');
  expect(codes).toMatch(/^\| 124 \|.*acquire section's shell.*143/m);
  const exits = section(rendered().text, 'EXIT STATUS');
  const entry = /^ {7}124\s+([\s\S]*?)\n\n/m.exec(exits)![1]!.replace(/\s+/g, ' ');
  expect(entry).toMatch(/acquire section's shell .*(SIGTERM|--signal).*143/);
  expect(entry).toMatch(/records 124/);
});
