import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import { type Plugin, defaultClientConditions, defineConfig } from 'vite';

const brotli = promisify(brotliCompress);
const gz = promisify(gzip);
const COMPRESSIBLE = /\.(html|js|css|svg|json)$/;

/**
 * Writes .br and .gz beside every text file of the build, so the server sends them as they
 * are (@fastify/static preCompressed) instead of compressing on each request.
 */
const precompress = (outDir: string): Plugin => ({
  name: 'cairn-precompress',
  apply: 'build',
  async closeBundle() {
    const files = (await readdir(outDir, { recursive: true })).filter((f) => COMPRESSIBLE.test(f));
    await Promise.all(
      files.map(async (file) => {
        const path = join(outDir, file);
        const data = await readFile(path);
        await writeFile(`${path}.br`, await brotli(data, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
        await writeFile(`${path}.gz`, await gz(data, { level: 9 }));
      }),
    );
  },
});

const root = import.meta.dirname;
const outDir = join(root, 'dist');

export default defineConfig({
  root,
  base: '/dashboard/',
  // Preact's automatic JSX runtime through Vite's own transformer: no Babel preset needed.
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  // `cairn-memory-client` from its sources (its SSE parser; the rest is types), so the
  // dashboard builds without the client being built first. Vite's defaults stay.
  resolve: { conditions: ['cairn-source', ...defaultClientConditions] },
  build: { outDir, emptyOutDir: true, target: 'es2022', assetsInlineLimit: 0, reportCompressedSize: true },
  plugins: [precompress(outDir)],
  logLevel: 'warn',
});
