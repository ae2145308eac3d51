// The results table: one row per fault kind. A number in parentheses is one docs/guarantees.md does
// not promise to keep at 0 under that fault: reported, never a failure.

const COLUMNS = [
  ['fault kind', (r) => r.name],
  ['promised (docs/guarantees.md)', (r) => promiseText(r)],
  ['faults', (r) => num(r, 'faults')],
  ['runs', (r) => num(r, 'runs')],
  ['overlaps', (r) => checked(r, 'overlaps')],
  ['stale rejected', (r) => num(r, 'stale_rejected')],
  ['stale accepted', (r) => checked(r, 'stale_accepted')],
  ['token regressions', (r) => checked(r, 'token_regressions')],
  ['past expiry', (r) => checked(r, 'past_expiry')],
  ['orphans', (r) => checked(r, 'orphans')],
  ['min slack ms', (r) => ((r.metrics?.min_slack_ms ?? '') === '' ? '' : String(Math.round(r.metrics.min_slack_ms)))],
  ['result', (r) => resultText(r)],
];
const NUMERIC = new Set([2, 3, 4, 5, 6, 7, 8, 9, 10]);

function promiseText(row) {
  const { tokens, expiry } = row.promises;
  return [tokens && 'fencing', expiry && 'expiry'].filter(Boolean).join(' + ') || 'none';
}

function num(row, metric) {
  return row.metrics ? String(row.metrics[metric]) : '';
}

function checked(row, property) {
  const check = row.checks?.find((c) => c.property === property);
  if (!check) return '';
  return check.promised ? String(check.value) : `(${check.value})`;
}

function resultText(row) {
  if (row.skipped) return `skipped: ${row.skipped}`;
  const failed = row.checks.filter((c) => !c.pass).map((c) => c.property);
  return failed.length ? `VIOLATED: ${failed.join(', ')}` : 'pass';
}

export function formatTable(rows) {
  const cells = rows.map((row) => COLUMNS.map(([, cell]) => cell(row)));
  const header = COLUMNS.map(([title]) => title);
  const widths = header.map((h, i) =>
    Math.max(h.length, ...cells.filter((_, n) => !rows[n].skipped).map((c) => c[i].length)),
  );
  const line = (c) =>
    c
      .map((text, i) =>
        i === c.length - 1 ? text : NUMERIC.has(i) ? text.padStart(widths[i]) : text.padEnd(widths[i]),
      )
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n');
}

/** The same table as GitHub markdown (for the README). */
export function formatMarkdown(rows) {
  const header = COLUMNS.map(([title]) => title);
  const cells = rows.map((row) => COLUMNS.map(([, cell]) => cell(row).replaceAll('|', '\\|')));
  return [
    `| ${header.join(' | ')} |`,
    `|${header.map((_, i) => (NUMERIC.has(i) ? '---:' : '---')).join('|')}|`,
    ...cells.map((c) => `| ${c.join(' | ')} |`),
  ].join('\n');
}
