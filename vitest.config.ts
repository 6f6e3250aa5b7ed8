import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    // Tests and fixture apps import the runtime by its package name, straight from source.
    alias: [
      { find: /^@core\/runtime$/, replacement: fileURLToPath(new URL('./runtime/src/index.ts', import.meta.url)) },
      { find: /^@core\/runtime\/cli$/, replacement: fileURLToPath(new URL('./runtime/src/cli.ts', import.meta.url)) },
    ],
  },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // 2 cores: two workers keep SQLite and PostgreSQL suites busy without thrashing.
    maxWorkers: 2,
    // In CI every test is listed (so the log shows the [postgresql] suites ran), then one summary line.
    reporters: process.env.CI
      ? ['verbose', './test/helpers/summary-reporter.ts']
      : ['default', './test/helpers/summary-reporter.ts'],
  },
});
