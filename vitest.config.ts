import { defineConfig } from 'vitest/config';

// Tests by kind, each folder a project: `npm test` runs them all; `npm run test:unit` only the
// pure ones (seconds); `npm run test:fast` all but slow/ (the binary, the npm tarball, chaos).
const KINDS = ['unit', 'scripts', 'cli', 'topology', 'hostile', 'slow'];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 30_000,
    // Integration tests start their own redis-server processes; two workers fit the 2-core machines.
    maxWorkers: 2,
    reporters: ['default'],
    projects: KINDS.map((name) => ({ extends: true, test: { name, include: [`test/${name}/**/*.test.ts`] } })),
  },
});
