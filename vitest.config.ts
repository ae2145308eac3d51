import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 30_000,
    // Integration tests start their own redis-server processes; two workers fit the 2-core machines.
    maxWorkers: 2,
    reporters: ['default'],
  },
});
