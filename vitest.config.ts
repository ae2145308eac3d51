import { defineConfig } from 'vitest/config';

// Tests by kind, each folder a project: `npm test` runs them all; `npm run test:unit` only the
// pure ones (seconds); `npm run test:fast` all but slow/ (the binary, the npm tarball, chaos).
const KINDS = ['unit', 'scripts', 'cli', 'topology', 'hostile', 'slow'];

/** The Lua scripts (src/lock/lua/*.lua) imported as text, as esbuild's text loader does in scripts/build.mjs. */
const luaAsText = {
  name: 'lua-as-text',
  enforce: 'pre' as const,
  transform(source: string, id: string) {
    return id.endsWith('.lua') ? { code: `export default ${JSON.stringify(source)};`, map: null } : undefined;
  },
};

export default defineConfig({
  plugins: [luaAsText],
  test: {
    testTimeout: 60_000,
    hookTimeout: 30_000,
    // Integration tests start their own redis-server processes; two workers fit the 2-core machines.
    maxWorkers: 2,
    reporters: ['default'],
    projects: KINDS.map((name) => ({ extends: true, test: { name, include: [`test/${name}/**/*.test.ts`] } })),
  },
});
