import { writeSync } from 'node:fs';
import module from 'node:module';

/**
 * Preloaded (`--import`) into a spawned `cairn`: at exit, writes one line to stderr naming
 * every package under node_modules that the process loaded (`loaded packages: […]`), so a
 * test can hold a start to what it needs (test/integration/startup-modules.test.ts).
 */
const packages = new Set<string>();
module.registerHooks({
  load(url, context, next) {
    const name = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1];
    if (name) packages.add(name);
    return next(url, context);
  },
});
process.on('exit', () => {
  writeSync(2, `loaded packages: ${JSON.stringify([...packages].sort())}\n`);
});
