import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The browser and serving tests need dashboard/dist; built once here, not per file.
    globalSetup: ['test/e2e/build-once.ts'],
    // Suites start real servers, databases and child processes: give them room, and run
    // files in separate forks so a crashed child cannot take the runner with it.
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    teardownTimeout: 30_000,
  },
});
