// dlock doctor: the backend checks each member of the store against what dlock's guarantees
// need (src/backends/redis/doctor/ for Redis); this prints what it found and what to change.
// Exit 0 without a FAIL, 1 with one, 69 when a member could not be reached (the others are
// still checked and shown).

import { noDoctor, type ConnectionConfig } from '../config/index.js';
import { UnavailableError } from '../errors.js';
import { backendModule, failureText, type DoctorCheck, type DoctorStatus } from '../backend/index.js';
import { stdout, type Output } from '../output.js';
import { printable, toJson } from '../untrusted.js';

export interface DoctorOptions {
  json: boolean;
  ttlMs: number;
  /** Columns to wrap the text report to (default 80). */
  width?: number;
}

export async function doctor(config: ConnectionConfig, options: DoctorOptions, out: Output = stdout): Promise<number> {
  const check = (await backendModule(config)).doctor;
  if (!check) throw noDoctor(config.caps);
  const { members, between, unchecked } = await check(config, { ttlMs: options.ttlMs });
  const overall = between.checks;
  const all = [...members.flatMap((m) => m.checks), ...overall];
  const worst: DoctorStatus = all.some((c) => c.status === 'FAIL')
    ? 'FAIL'
    : all.some((c) => c.status === 'WARN')
      ? 'WARN'
      : 'OK';

  if (options.json) {
    // Each member's entry names it by the backend's field ("redis").
    const field = config.caps.members.field;
    const instances = members.map(({ label, reachable, checks }) => ({ [field]: label, reachable, checks }));
    out.write(`${toJson({ status: worst, ttl_ms: options.ttlMs, instances, checks: overall })}\n`);
  } else {
    out.write(report(members, between, all, options.width ?? 80));
  }
  if (unchecked.length > 0) {
    throw new UnavailableError(
      `doctor could not check ${unchecked.length} of ${members.length} ${config.caps.members.noun} ` +
        `(${unchecked.map(failureText).join('; ')})`,
    );
  }
  return worst === 'FAIL' ? 1 : 0;
}

const MARK: Record<DoctorStatus, string> = { OK: 'OK  ', WARN: 'WARN', FAIL: 'FAIL' };

/**
 * `first` then `text`, broken at spaces into lines of at most `columns`, the ones after the first
 * starting with `indent`; a word longer than a line has to itself stays whole.
 */
function wrap(first: string, text: string, indent: string, columns: number): string[] {
  const lines: string[] = [];
  let line = first;
  let empty = true;
  for (const word of text.split(' ')) {
    if (!empty && line.length + 1 + word.length > columns) {
      lines.push(line);
      line = indent;
      empty = true;
    }
    line += (empty ? '' : ' ') + word;
    empty = false;
  }
  return [...lines, line];
}

function report(
  members: { label: string; checks: DoctorCheck[] }[],
  between: { heading: string; checks: DoctorCheck[] },
  all: DoctorCheck[],
  columns: number,
): string {
  const width = Math.max(...all.map((c) => c.name.length));
  const indent = ' '.repeat(10 + width);
  const lines = (checks: DoctorCheck[]) =>
    checks.flatMap((c) => [
      ...wrap(`  ${MARK[c.status]}  ${c.name.padEnd(width)}  `, printable(c.message), indent, columns),
      ...(c.fix ? wrap(indent, `fix: ${printable(c.fix)}`, indent, columns) : []),
    ]);
  const blocks = members.map((m) => [m.label, ...lines(m.checks)].join('\n'));
  if (between.checks.length > 0) blocks.push([between.heading, ...lines(between.checks)].join('\n'));
  const count = (status: DoctorStatus) => all.filter((c) => c.status === status).length;
  return `${blocks.join('\n\n')}\n\n${count('FAIL')} FAIL, ${count('WARN')} WARN, ${count('OK')} OK\n`;
}
