import { fileURLToPath } from 'node:url';

/**
 * The `cairn` command the package ships: packages/server/bin/cairn.js over the bundle in dist/.
 * The suites' global setup (test/e2e/build-once.ts) builds it from the sources when they are
 * newer, so a spawned `cairn` runs the code under test, as a user's install runs it.
 */
export const CLI_BIN = fileURLToPath(new URL('../../packages/server/bin/cairn.js', import.meta.url));

/** Enables Node's compile cache in the spawned process before the CLI loads (compile-cache.ts). */
const COMPILE_CACHE = new URL('./compile-cache.ts', import.meta.url).href;

/**
 * Node arguments that run `cairn` as built: spawn as `spawn(process.execPath, [...CLI_ARGS,
 * 'serve'])`. Source maps turn a stack trace the process prints into lines of the sources.
 */
export const CLI_ARGS: readonly string[] = ['--enable-source-maps', `--import=${COMPILE_CACHE}`, CLI_BIN];
