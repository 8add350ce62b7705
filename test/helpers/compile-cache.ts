import module from 'node:module';
import { fileURLToPath } from 'node:url';

/**
 * Preloaded (`--import`) into every `cairn` the suites spawn from sources (CLI_ARGS): Node
 * keeps the bytecode it compiles in one cache for the whole suite, as the published `cairn`
 * does in its temporary directory (packages/server/bin/cairn.js), so each of the suite's
 * hundreds of servers and commands skips most compiling (`cairn --help` from sources: about
 * 1.1 s → 0.65 s). The cache sits under node_modules/.cache, never in a TMPDIR a test gives
 * its child; Node checks each entry against its source, so an edited file is compiled afresh.
 */
module.enableCompileCache?.(fileURLToPath(new URL('../../node_modules/.cache/cairn-test-compile-cache', import.meta.url)));
