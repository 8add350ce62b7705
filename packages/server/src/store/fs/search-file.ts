import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeAtomically } from './atomic-file.ts';

/**
 * The file the in-process search index keeps in the data directory (search/index-snapshot.ts
 * decides what goes in it). Written to a temporary name, synced, then renamed over the old
 * one, so a crash leaves either the previous file or the new one, never half of one.
 */
export const searchIndexFile = (dir: string, name = 'search-index') => {
  const path = join(dir, name);
  return {
    read: async (): Promise<Buffer | null> => {
      try {
        return await readFile(path);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw error;
      }
    },
    write: (fill: (sink: (chunk: Buffer) => Promise<void>) => Promise<void>): Promise<void> =>
      writeAtomically(path, (file) =>
        fill(async (chunk) => {
          await file.write(chunk);
        }),
      ),
  };
};
