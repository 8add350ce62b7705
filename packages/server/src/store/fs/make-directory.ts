import { mkdir, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

/**
 * `mkdir -p`, one level at a time from the nearest directory that exists. Node's recursive
 * mkdir never returns for a path under /proc (`--data-dir /proc/nope`: libuv retries the
 * ENOENT that procfs answers for good), so a server given one hung without a word; made a
 * level at a time, the same ENOENT is an error that says which directory cannot be made.
 */
export const makeDirectory = async (dir: string, mode: number): Promise<void> => {
  const missing: string[] = [];
  for (let at = resolve(dir); ; at = dirname(at)) {
    try {
      await stat(at);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      missing.push(at);
      if (dirname(at) === at) break;
    }
  }
  for (const level of missing.reverse()) {
    // Another process may make it meanwhile (two servers starting on one new directory).
    await mkdir(level, { mode }).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
  }
};
