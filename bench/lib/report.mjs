// Rows of the results table, the table as text, and the machine the bench ran on.

import { execFileSync } from 'node:child_process';
import { cpus, loadavg, totalmem } from 'node:os';

/** median/p99/n of a summary, for a row. */
export function pick(stats) {
  return { median: stats.median, p99: stats.p99, n: stats.n };
}

/** Target `value ≤ limit` (shown with `unit`). */
export function atMost(value, limit, unit = '×') {
  return { target: `≤ ${limit}${unit}`, pass: value <= limit };
}

export function machineInfo(redisVersion) {
  const cpu = cpus();
  return {
    cpu: cpu[0]?.model?.trim() ?? 'unknown',
    cores: cpu.length,
    memory_gb: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    redis: redisVersion,
    kernel: tryRun('uname', ['-sr']),
    loadavg_start: loadavg().map((x) => Math.round(x * 100) / 100),
  };
}

function tryRun(command, args) {
  try {
    return execFileSync(command, args, { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

const fmt = (x, digits = 1) =>
  x === undefined || x === null || Number.isNaN(x) ? '' : typeof x === 'number' ? x.toFixed(digits) : String(x);

export function formatTable(rows) {
  const header = ['section', 'measure', 'n', 'median', 'p99', 'unit', 'ratio', 'target', 'result'];
  const lines = rows.map((r) => [
    r.section,
    r.measure,
    r.n === undefined ? '' : String(r.n),
    fmt(r.median, r.unit === 'cmd/s' ? 2 : 1),
    fmt(r.p99, 1),
    r.unit ?? '',
    r.ratio === undefined ? '' : `${r.ratio.toFixed(2)}${r.ratioOf ? ` ${r.ratioOf}` : ''}`,
    r.target ?? '',
    r.failed
      ? `${r.pass === false ? 'MISS' : 'FAILED'}: ${r.failed}`
      : r.skipped
        ? `skipped: ${r.skipped}`
        : r.pass === undefined
          ? ''
          : r.pass
            ? 'pass'
            : 'MISS',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const numeric = new Set([2, 3, 4]);
  const line = (cells) =>
    cells
      .map((c, i) => (numeric.has(i) ? c.padStart(widths[i]) : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  const out = [line(header), widths.map((w) => '-'.repeat(w)).join('  ')];
  let section;
  for (const [i, cells] of lines.entries()) {
    if (section !== undefined && rows[i].section !== section) out.push('');
    section = rows[i].section;
    out.push(line(cells));
  }
  return out.join('\n');
}
