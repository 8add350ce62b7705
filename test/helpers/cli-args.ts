import { fileURLToPath } from 'node:url';

/** The server's CLI entry point, run from its TypeScript sources. */
export const CLI_SOURCE = fileURLToPath(new URL('../../packages/server/src/cli.ts', import.meta.url));

/** Enables Node's compile cache in the spawned process before the CLI loads (compile-cache.ts). */
const COMPILE_CACHE = new URL('./compile-cache.ts', import.meta.url).href;

/**
 * Node arguments that run `cairn` from the sources of both packages: the "cairn-source"
 * export condition resolves the server's `cairn-memory-client` imports to the client's
 * sources instead of its build. Spawn as `spawn(process.execPath, [...CLI_ARGS, 'serve'])`.
 */
export const CLI_ARGS: readonly string[] = ['--conditions=cairn-source', `--import=${COMPILE_CACHE}`, CLI_SOURCE];
