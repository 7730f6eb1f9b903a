import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    maxWorkers: 2,
    fileParallelism: true,
    projects: [
      {
        // Unit files share one module graph per worker: a fresh fork and a fresh import of the
        // SDKs per 50 ms file cost more than the tests (56 files: 53 s isolated, 17 s shared).
        // They start no process and touch no global state a later file would see.
        extends: true,
        test: { name: 'unit', include: ['test/unit/**/*.test.ts'], isolate: false },
      },
      {
        // Integration files start servers, children and bridges in the worker: each gets its own.
        extends: true,
        test: { name: 'integration', include: ['test/**/*.test.ts'], exclude: ['test/unit/**', '**/node_modules/**'] },
      },
    ],
  },
});
