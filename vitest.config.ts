import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { BINARY_PASS, IDLE_LANE, SECONDS } from './test/binary-pass.js';

// Tests by kind, each folder a project: `npm run test:unit` only the pure ones (seconds);
// `npm run test:fast` all but slow/ (the binary, the npm tarball, chaos). `npm test` (and .ci/run)
// runs unit and scripts first, then every project that spawns dlock together with `binary`.
const KINDS = ['unit', 'scripts', 'cli', 'topology', 'hostile', 'slow'];
const ROOT = fileURLToPath(new URL('.', import.meta.url));

// The binary pass: the files of test/binary-pass.ts (chosen by what Bun does differently from Node,
// each with its reason) again, against dist/dlock-linux-x64. Defined when DLOCK_BINARY_PASS=1 (npm test,
// npm run test:binary), so `npx vitest run <file>` still runs a file once, against bin/dlock; in the same
// vitest run as the others, so both passes share the two workers and no pass waits for the other.
// DLOCK_BIN=<executable> alone, as before, runs whatever is selected against that executable
// (`npm run test:binary:all`: every file of cli, topology, hostile and slow).
const BINARY_PASS_ON = process.env.DLOCK_BINARY_PASS === '1';
// scripts/test-spawn.mjs runs the files of IDLE_LANE (test/binary-pass.ts) as a vitest run of their
// own (DLOCK_TEST_LANE=idle) beside the main one (DLOCK_TEST_LANE=main, which leaves them out).
const LANE = process.env.DLOCK_TEST_LANE;
const IDLE_FILES = IDLE_LANE.map((file) => `test/${file}.test.ts`);
/** A project's files in this lane: all of them, all but the idle ones (main), or only those (idle). */
const inLane = (include: string[], exclude: string[] = []) => {
  if (LANE === 'main') return { include, exclude: [...exclude, ...IDLE_FILES] };
  if (LANE !== 'idle') return { include, exclude };
  const folders = include
    .filter((glob) => glob.endsWith('/**/*.test.ts'))
    .map((glob) => glob.slice(0, -'**/*.test.ts'.length));
  const idle = IDLE_FILES.filter((file) => include.includes(file) || folders.some((folder) => file.startsWith(folder)));
  // A project with no idle file gets a pattern that matches nothing (vitest would otherwise run all).
  return { include: idle.length > 0 ? idle : ['test/__none__.test.ts'], exclude };
};
const binary = {
  name: 'binary',
  include: Object.keys(BINARY_PASS).map((file) => `test/${file}.test.ts`),
  env: { DLOCK_BIN: `${ROOT}dist/dlock-linux-x64` },
};

/** The Lua scripts (src/backends/redis/lock/lua/*.lua) imported as text, as esbuild's text loader does in scripts/build.mjs. */
const luaAsText = {
  name: 'lua-as-text',
  enforce: 'pre' as const,
  transform(source: string, id: string) {
    return id.endsWith('.lua') ? { code: `export default ${JSON.stringify(source)};`, map: null } : undefined;
  },
};

/**
 * Longest file first, whatever its project, so the two workers end together instead of one idling
 * behind a 70 s file started last. A file's time is vitest's own from an earlier run here, else
 * SECONDS (test/binary-pass.ts) on a fresh clone (CI), else vitest's order (larger files first).
 */
class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const seconds = (spec: TestSpecification): number => {
      const path = relative(ROOT, spec.moduleId);
      const cached = this.ctx.cache.getFileTestResults(`${spec.project.name}:${path}`)?.duration;
      if (cached !== undefined) return cached / 1000;
      const known = SECONDS[path.replace(/^test\//, '').replace(/\.test\.ts$/, '')];
      return known === undefined ? 0 : known[spec.project.name === 'binary' ? 1 : 0];
    };
    const sorted = await super.sort(files);
    const order = new Map(sorted.map((spec) => [spec, seconds(spec)]));
    return sorted.sort((a, b) => order.get(b)! - order.get(a)!);
  }
}

export default defineConfig({
  plugins: [luaAsText],
  test: {
    testTimeout: 60_000,
    hookTimeout: 30_000,
    // Integration tests start their own redis-server processes; two workers fit the 2-core machines
    // (the files that mostly wait get a lane of their own in `npm run test:spawn`: IDLE_LANE).
    maxWorkers: 2,
    reporters: ['default'],
    sequence: { sequencer: LongestFirst },
    projects: [
      ...KINDS.map((name) => ({
        extends: true as const,
        test: {
          name,
          // In the binary pass test/slow/binary.test.ts takes the executable built for it (in
          // `binary`) instead of building one of its own.
          ...inLane(
            [`test/${name}/**/*.test.ts`],
            BINARY_PASS_ON && name === 'slow' ? ['test/slow/binary.test.ts'] : [],
          ),
        },
      })),
      ...(BINARY_PASS_ON ? [{ extends: true as const, test: { ...binary, ...inLane(binary.include) } }] : []),
    ],
  },
});
