import { open, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { syncDirectory } from './segment-log.ts';

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
    write: async (fill: (sink: (chunk: Buffer) => Promise<void>) => Promise<void>): Promise<void> => {
      const tmp = `${path}.tmp`;
      const file = await open(tmp, 'w', 0o600);
      try {
        await fill(async (chunk) => {
          await file.write(chunk);
        });
        await file.datasync();
      } catch (error) {
        await file.close();
        await rm(tmp, { force: true });
        throw error;
      }
      await file.close();
      await rename(tmp, path);
      await syncDirectory(dir);
    },
  };
};
