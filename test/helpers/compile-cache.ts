import module from 'node:module';
import { fileURLToPath } from 'node:url';

/**
 * Preloaded (`--import`) into every `cairn` the suites spawn (CLI_ARGS): Node keeps the
 * bytecode it compiles in one cache for the whole suite, so each of the suite's hundreds of
 * servers and commands skips most compiling (`cairn --help` when it ran from the sources:
 * about 1.1 s → 0.65 s). The published `cairn` enables it too, in the system's temporary
 * directory (packages/server/bin/cairn.js, which finds it enabled here); the suites' cache sits
 * under node_modules/.cache instead, never in a TMPDIR a test gives its child. Node checks
 * each entry against its source, so a rebuilt file is compiled afresh.
 */
module.enableCompileCache?.(fileURLToPath(new URL('../../node_modules/.cache/cairn-test-compile-cache', import.meta.url)));
