#!/usr/bin/env node
// Entry point of the `cairn` command: the bundled CLI (npm run build writes dist/). In the
// repository, `npm start` runs the TypeScript sources instead; the processes the suites spawn
// run this file.
import module from 'node:module';

// Node keeps the bytecode it compiles from Cairn's modules and dependencies in its temporary
// directory, so the next start skips most compiling: 0.1–0.2 s of the ~1 s a server takes to
// answer (an MCP client starts one per session). It does nothing where that directory is not
// writable, and NODE_DISABLE_COMPILE_CACHE=1 turns it off.
module.enableCompileCache?.();
await import('../dist/cli.js');
