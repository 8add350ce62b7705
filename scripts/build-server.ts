// Builds the server package's dist/: its TypeScript sources bundled by rolldown into a few
// dozen modules at the top of dist/, and the files the code reads beside itself (SQL
// migrations, word tables, licences) copied to the same paths under dist/ as under src/
// (src/package-files.ts finds them there).
//
// Why a bundle: a start of `cairn serve` loaded ~320 of Cairn's own modules, compiled one by
// one. Node's loader costs about a millisecond of CPU per module (resolving, reading, linking),
// and an MCP client starts a `cairn` for every session. Bundled, importing the server's whole
// graph took 330 ms instead of 560–650 ms (CPU 470 ms instead of 780–890 ms), with the compile
// cache warm both times. The dependencies stay packages of their own, loaded from
// node_modules as npm installs them: bundling them too saved a further ~70 ms, not worth
// shipping third-party code (and its licences) inside ours.
//
// Every command's own code is still loaded only when it runs: the dynamic imports in cli.ts
// and cli/*.ts become chunks of their own. Worker threads are entries of their own, named by
// their path under src/ (src/package-files.ts, workerScript).
import { cpSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { build } from 'rolldown';

/** The worker threads' scripts, by path under src/ without the extension. */
const WORKERS = ['embed/builtin-worker', 'embed/onnx-worker', 'search/quantizer-worker', 'search/snapshot-worker'];

/** Files the server reads at run time beside its modules (src/package-files.ts). */
export const SERVER_ASSETS = /\.(sql|bin|tsv)$|-LICENSE$/;

/**
 * Bundles `pkg`/src into `pkg`/dist (emptied first, so that nothing deleted from src/ lives
 * on in what is packed) and writes `stamp` into it once everything is in place.
 */
export const buildServer = async (pkg: string, stamp: string): Promise<void> => {
  const src = join(pkg, 'src');
  const dist = join(pkg, 'dist');
  rmSync(dist, { recursive: true, force: true });
  await build({
    input: Object.fromEntries([['cli', join(src, 'cli.ts')], ...WORKERS.map((name) => [name, join(src, `${name}.ts`)])]),
    platform: 'node',
    // Every bare specifier (a dependency, cairn-memory-client, node:*) is imported at run time.
    external: [/^[^./]/],
    transform: { target: 'es2024' },
    logLevel: 'warn',
    output: {
      dir: dist,
      format: 'esm',
      entryFileNames: '[name].js',
      // At the top of dist/, as src/package-files.ts requires of every module of the build.
      chunkFileNames: '[name]-[hash].js',
      sourcemap: true,
    },
  });
  for (const file of readdirSync(src, { recursive: true, encoding: 'utf8' }).filter((path) => SERVER_ASSETS.test(path))) {
    mkdirSync(dirname(join(dist, file)), { recursive: true });
    cpSync(join(src, file), join(dist, file));
  }
  writeFileSync(join(dist, stamp), `${new Date().toISOString()}\n`);
};
