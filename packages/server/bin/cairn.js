#!/usr/bin/env node
// Entry point of the `cairn` command: the compiled CLI (npm run build writes dist/). In the
// repository, `npm start` and the tests run the TypeScript sources instead.
await import('../dist/cli.js');
