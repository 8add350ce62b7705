import { fileURLToPath } from 'node:url';

/** The server's CLI entry point, run from its TypeScript sources. */
export const CLI_SOURCE = fileURLToPath(new URL('../../packages/server/src/cli.ts', import.meta.url));

/**
 * Node arguments that run `cairn` from the sources of both packages: the "cairn-source"
 * export condition resolves the server's `cairn-memory-client` imports to the client's
 * sources instead of its build. Spawn as `spawn(process.execPath, [...CLI_ARGS, 'serve'])`.
 */
export const CLI_ARGS: readonly string[] = ['--conditions=cairn-source', CLI_SOURCE];
