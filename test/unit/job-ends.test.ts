// docs/guarantees.md's table of every way a job can end: each row names the test that shows it,
// and that test exists (its title, as written in that file). The rows the issue asked for are there.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DOC = 'docs/guarantees.md';

/** The table's rows after the JOB ENDS TABLE marker: cells, split on unescaped pipes. */
function rows(): string[][] {
  const lines = readFileSync(join(ROOT, DOC), 'utf8').split('\n');
  const start = lines.findIndex((line) => line.includes('JOB ENDS TABLE'));
  expect(start, `${DOC} has no JOB ENDS TABLE marker`).toBeGreaterThan(0);
  const table: string[] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    table.push(line);
  }
  return table.slice(2).map((line) =>
    line
      .slice(1, -1)
      .split(/(?<!\\)\|/)
      .map((cell) => cell.trim()),
  );
}

test('every row names a test that exists', () => {
  const table = rows();
  expect(table.length).toBeGreaterThan(10);
  for (const cells of table) {
    expect(cells, cells.join(' | ')).toHaveLength(5);
    const where = /^`([\w./-]+\.test\.ts)` › "(.*)"$/.exec(cells[4]!);
    expect(where, `row "${cells[0]}": its last cell names no test`).not.toBeNull();
    const [, file, title] = where!;
    const path = join(ROOT, 'test', file!);
    expect(existsSync(path), `row "${cells[0]}": no ${file}`).toBe(true);
    const source = readFileSync(path, 'utf8');
    // In the table a title's double quotes are escaped (\"); in the source it is quoted whole.
    const raw = title!.replace(/\\"/g, '"');
    const named = [`'${raw}'`, `"${raw}"`, `\`${raw}\``].some((quoted) => source.includes(quoted));
    expect(named, `row "${cells[0]}": ${file} has no test titled ${title}`).toBe(true);
  }
});

test('the ways a job ends that dlock promises to cover each have a row', () => {
  const ends = rows().map((cells) => cells[0]!);
  for (const way of [
    /command exits/,
    /background children/,
    /nested runs at any depth/,
    /several sections/,
    /set -e/,
    /keeper is killed/,
    /Redis down/,
    /Redis stops answering/,
    /lock is lost/,
    /--max-hold/,
  ]) {
    expect(
      ends.some((end) => way.test(end)),
      `no row for ${way}`,
    ).toBe(true);
  }
});
