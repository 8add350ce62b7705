import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { LongFirstSequencer } from './test/sequencer.ts';

// Inside the runner, tests run the TypeScript sources of both packages: this alias points the
// server's `cairn-memory-client` imports at the client's sources. The `cairn` processes the
// suites spawn run the package as built (test/helpers/cli-args.ts), which the global setup
// below rebuilds first when the sources are newer.
export default defineConfig({
  resolve: {
    alias: { 'cairn-memory-client': fileURLToPath(new URL('./packages/client/src/index.ts', import.meta.url)) },
  },
  test: {
    include: ['test/**/*.test.ts'],
    // The packages' dist/ (spawned `cairn`) and the dashboard's, for the browser and serving
    // tests, are built once here when stale, not per file,
    // and the PostgreSQL cluster suites copy is made once (test/services-once.ts).
    globalSetup: ['test/e2e/build-once.ts', 'test/services-once.ts'],
    setupFiles: ['test/setup/environment-kept.ts', 'test/setup/file-cpu.ts'],
    // Suites start real servers, databases and child processes: give them room, and run
    // files in forks, not the runner's process, so a crashed child cannot take the runner with it.
    pool: 'forks',
    // Each fork runs file after file, keeping what it has loaded: a fresh fork per file cost
    // ~0.2 s to spawn and ~1 s to import the server again, 286 times (the unit files alone:
    // 220 s of CPU with a fork per file, 187 s without). So a file must leave the process as it
    // found it: close the servers and stores it opens, and put back any environment variable it
    // sets (test/setup/environment-kept.ts fails a file that does not).
    isolate: false,
    sequence: { sequencer: LongFirstSequencer },
    // Two files at a time even on two cores (vitest's default there is one): most suites spend
    // their time waiting on the servers, databases and children they start, so the second
    // file fills the first's waits. On the 2-core CI machine the suite took 837 s one file at a
    // time and 528 s two at a time, with the same tests passing.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    testTimeout: 30_000,
    hookTimeout: 60_000,
    teardownTimeout: 30_000,
  },
});
