// The import rules of src/ (.dependency-cruiser.cjs): commands/, hold/, keeper/, child/ and views/
// reach the lock engine only through src/backends/redis/index.ts, never src/backends/redis/lock/ or src/backends/redis/client/, and no
// import cycle. dependency-cruiser reads the real import graph; any violation fails this test.

import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, test } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const cli = fileURLToPath(new URL('../../node_modules/dependency-cruiser/bin/dependency-cruise.mjs', import.meta.url));

interface Violation {
  from: string;
  to: string;
  rule: { name: string };
  cycle?: { name: string }[];
}

test('src/ keeps its import rules (npm run lint:imports)', { timeout: 120_000 }, async () => {
  // The CLI exits non-zero when a rule is broken: its JSON report is on stdout all the same.
  const stdout = await promisify(execFile)(
    process.execPath,
    [cli, 'src', '--config', '.dependency-cruiser.cjs', '--output-type', 'json'],
    { cwd: root, maxBuffer: 64 * 1024 * 1024 },
  ).then(
    (done) => done.stdout,
    (error: { stdout?: string }) => error.stdout ?? '',
  );
  const { summary } = JSON.parse(stdout) as { summary: { violations: Violation[]; totalCruised: number } };
  const broken = summary.violations.map(({ rule, from, to, cycle }) =>
    cycle ? `${rule.name}: ${[from, ...cycle.map(({ name }) => name)].join(' -> ')}` : `${rule.name}: ${from} -> ${to}`,
  );
  expect(broken).toEqual([]);
  // The rules did run over the whole of src/ (a wrong path would find nothing to break).
  expect(summary.totalCruised).toBeGreaterThan(100);
});
