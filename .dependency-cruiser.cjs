// The import rules of src/ (npm run lint:imports; test/unit/import-rules.test.ts runs them too).
// The layers above the lock engine (commands, hold, keeper, child, views) see it only through its
// face, src/backends/redis/index.ts, and never reach past it into src/backends/redis/lock/ or src/backends/redis/client/. The doctor command too:
// it asks the backend's entry for its checks.

const UPPER = '^src/(commands|hold|keeper|child|views|metrics|monitor|bounds)/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'upper-past-engine',
      comment:
        'commands/, hold/, keeper/, child/, views/, metrics/, monitor/ and bounds/ use src/backends/redis/index.ts, never src/backends/redis/lock/ or src/backends/redis/client/',
      severity: 'error',
      from: { path: UPPER },
      to: { path: '^src/backends/redis/(lock|client|doctor)/' },
    },
    {
      name: 'upper-through-face',
      comment:
        'commands/, hold/, keeper/, child/, views/, metrics/, monitor/ and bounds/ import src/backends/redis/ only through its index.ts',
      severity: 'error',
      from: { path: UPPER },
      to: { path: '^src/backends/redis/[^/]+$', pathNot: '^src/backends/redis/index[.]ts$' },
    },
    {
      name: 'no-circular',
      comment: 'no import cycles (type-only imports included)',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports count: `import type` from src/backends/redis/lock/ reaches past the face as much as any.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
