// The import rules of src/ (.dependency-cruiser.cjs): the layers above (config/, cli/, commands/,
// hold/, keeper/, child/, views/, metrics/, monitor/, bounds/, completion/, src/*.ts) reach the
// engines only through src/backend/index.ts; nothing in src/backends/<store>/ imports above it or
// another backend; src/backend/ reaches an engine only from open.ts (its index.ts) and connection.ts
// (its connection.ts); no import cycle. dependency-cruiser reads the real import graph: the tree
// must break no rule, and each rule is seen failing on a copy of src/ with one import added for it.

import { execFile } from 'node:child_process';
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, test } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const cli = fileURLToPath(new URL('../../node_modules/dependency-cruiser/bin/dependency-cruise.mjs', import.meta.url));

interface Violation {
  from: string;
  to: string;
  rule: { name: string };
  cycle?: { name: string }[];
}

interface Report {
  violations: Violation[];
  totalCruised: number;
}

/** dependency-cruiser's report on `dir`'s src/, by its own .dependency-cruiser.cjs. */
async function cruise(dir: string): Promise<Report> {
  // The CLI exits non-zero when a rule is broken: its JSON report is on stdout all the same.
  const stdout = await promisify(execFile)(
    process.execPath,
    [cli, 'src', '--config', '.dependency-cruiser.cjs', '--output-type', 'json'],
    { cwd: dir, maxBuffer: 64 * 1024 * 1024 },
  ).then(
    (done) => done.stdout,
    (error: { stdout?: string }) => error.stdout ?? '',
  );
  return (JSON.parse(stdout) as { summary: Report }).summary;
}

/**
 * One deliberate violation per rule: `file` (under src/) gets `line` appended, an import from it to
 * `to` that `rule` forbids. The violations share one copy of src/: each is its own edge, and each edge
 * is checked for its rule alone.
 */
const BREAKS = [
  {
    rule: 'above-only-face-index',
    why: 'hold/ imports a face module other than index.ts',
    file: 'src/hold/hold.ts',
    line: "import '../backend/open.js';",
    to: 'src/backend/open.ts',
  },
  {
    rule: 'above-not-into-engines',
    why: 'hold/ imports an engine module (type-only imports count)',
    file: 'src/hold/hold.ts',
    line: "import type * as keys from '../backends/redis/lock/keys.js';",
    to: 'src/backends/redis/lock/keys.ts',
  },
  {
    rule: 'above-not-into-engines',
    why: 'cli/ imports an engine entry',
    file: 'src/cli/program.ts',
    line: "import '../backends/redis/index.js';",
    to: 'src/backends/redis/index.ts',
  },
  {
    rule: 'above-not-into-engines',
    why: 'a root file re-exports an engine around the face',
    file: 'src/main.ts',
    line: "export * from './backends/redis/index.js';",
    to: 'src/backends/redis/index.ts',
  },
  {
    rule: 'above-not-into-engines',
    why: "the doctor command imports the Redis engine's doctor module (it goes through the face, backendModule)",
    file: 'src/commands/doctor.ts',
    line: "import '../backends/redis/doctor/checks.js';",
    to: 'src/backends/redis/doctor/checks.ts',
  },
  {
    rule: 'engine-not-above',
    why: 'an engine imports a layer above it',
    file: 'src/backends/redis/lock/keys.ts',
    line: "import '../../../completion/text.js';",
    to: 'src/completion/text.ts',
  },
  {
    rule: 'engine-not-above',
    why: 'an engine imports hold/',
    file: 'src/backends/redis/list.ts',
    line: "import '../../hold/hold.js';",
    to: 'src/hold/hold.ts',
  },
  {
    rule: 'engine-not-above',
    why: 'an engine imports the face that opens it',
    file: 'src/backends/redis/names.ts',
    line: "import '../../backend/index.js';",
    to: 'src/backend/index.ts',
  },
  {
    rule: 'engine-not-other-engine',
    why: 'one backend imports another',
    file: 'src/backends/other/index.ts',
    line: "import '../redis/index.js';",
    to: 'src/backends/redis/index.ts',
  },
  {
    rule: 'face-reaches-engines-by-open-and-connection',
    why: "a neutral module of the face imports an engine's entry",
    file: 'src/backend/mode.ts',
    line: "import '../backends/redis/index.js';",
    to: 'src/backends/redis/index.ts',
  },
  {
    rule: 'engine-loaded-when-opened',
    why: 'open.ts imports an engine statically (it would load on every command)',
    file: 'src/backend/open.ts',
    line: "import '../backends/redis/index.js';",
    to: 'src/backends/redis/index.ts',
  },
  {
    rule: 'face-open-to-engine-index',
    why: 'open.ts imports an engine past its index.ts',
    file: 'src/backend/open.ts',
    line: "import '../backends/redis/lock/keys.js';",
    to: 'src/backends/redis/lock/keys.ts',
  },
  {
    rule: 'face-connection-to-engine-connection',
    why: "connection.ts imports an engine's entry, not its connection module",
    file: 'src/backend/connection.ts',
    line: "import '../backends/redis/index.js';",
    to: 'src/backends/redis/index.ts',
  },
  {
    rule: 'no-circular',
    why: 'pid.ts imports keeper/runtime.ts, which imports pid.ts',
    file: 'src/pid.ts',
    line: "import './keeper/runtime.js';",
    to: 'src/keeper/runtime.ts',
  },
];

let scratch: string;
let tree: Promise<Report>;
let broken: Promise<Report>;

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'dlock-import-rules-'));
  cpSync(join(root, 'src'), join(scratch, 'src'), { recursive: true });
  cpSync(join(root, 'tsconfig.json'), join(scratch, 'tsconfig.json'));
  cpSync(join(root, '.dependency-cruiser.cjs'), join(scratch, '.dependency-cruiser.cjs'));
  symlinkSync(join(root, 'node_modules'), join(scratch, 'node_modules'));
  for (const { file, line } of BREAKS) {
    mkdirSync(join(scratch, file, '..'), { recursive: true });
    appendFileSync(join(scratch, file), `\n${line}\n`);
  }
  // The whole tree and the broken copy at once: the two cruises share the two cores.
  tree = cruise(root);
  broken = cruise(scratch);
  return Promise.all([tree, broken]).then(() => undefined);
}, 120_000);

afterAll(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

test('src/ keeps its import rules (npm run lint:imports)', async () => {
  const { violations, totalCruised } = await tree;
  const lines = violations.map(({ rule, from, to, cycle }) =>
    cycle ? `${rule.name}: ${[from, ...cycle.map(({ name }) => name)].join(' -> ')}` : `${rule.name}: ${from} -> ${to}`,
  );
  expect(lines).toEqual([]);
  // The rules did run over the whole of src/ (a wrong path would find nothing to break).
  expect(totalCruised).toBeGreaterThan(100);
});

/** The imports a violation names: its one edge, or every edge of its cycle (reported from any of its modules). */
function edges({ from, to, cycle }: Violation): string[] {
  if (!cycle) return [`${from} -> ${to}`];
  const chain = [from, ...cycle.map(({ name }) => name)];
  return chain.slice(1).map((name, i) => `${chain[i]} -> ${name}`);
}

test.each(BREAKS)('$rule fails when $why ($file -> $to)', async ({ rule, file, to }) => {
  const { violations } = await broken;
  // An import that closes a cycle is also no-circular's: the rule under test must be among the edge's.
  const rules = violations.filter((v) => edges(v).includes(`${file} -> ${to}`)).map((v) => v.rule.name);
  expect(rules).toContain(rule);
});

test('the broken copy breaks no rule but the ones it was given', async () => {
  const { violations } = await broken;
  const given = new Set(BREAKS.map(({ file, to }) => `${file} -> ${to}`));
  const others = violations
    .filter(({ rule, from, to }) => rule.name !== 'no-circular' && !given.has(`${from} -> ${to}`))
    .map(({ rule, from, to }) => `${rule.name}: ${from} -> ${to}`);
  expect(others).toEqual([]);
});
