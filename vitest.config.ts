import { defineConfig } from 'vitest/config';
import { SlowFirstSequencer } from './test/setup/slow-first-sequencer.js';

/**
 * What both projects share. Not through `extends: true`: a project that inherits the root's
 * maxWorkers ignores `--maxWorkers` on the command line (vitest 4.1), and `--maxWorkers=1` is how
 * one file is run on a shared machine.
 */
const shared = { testTimeout: 30_000, hookTimeout: 30_000, pool: 'forks' } as const;

export default defineConfig({
  test: {
    ...shared,
    maxWorkers: 2,
    fileParallelism: true,
    // The slowest files first, in a clean clone too (CI): see the sequencer.
    sequence: { sequencer: SlowFirstSequencer },
    projects: [
      {
        // Unit files share one module graph per worker: a fresh fork and a fresh import of the
        // SDKs per 50 ms file cost more than the tests (55 files: 53 s isolated, 17 s shared).
        // They start no process and touch no global state a later file would see.
        test: { ...shared, name: 'unit', include: ['test/unit/**/*.test.ts'], isolate: false },
      },
      {
        // Integration files start servers, children and bridges in the worker: each gets its own.
        test: { ...shared, name: 'integration', include: ['test/**/*.test.ts'], exclude: ['test/unit/**', '**/node_modules/**'] },
      },
    ],
  },
});
