import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { writeAtomically } from './atomic-file.ts';

/** Bytes read per call when reading the index file back. */
const READ_PART = 64 * 1024 * 1024;

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
        return await readWhole(path);
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

/**
 * The whole file, read in parts into one buffer: readFile refuses a file over 2 GiB, which
 * the index of about three million entries passes (737 MB at 1.17M), and the server then
 * rebuilt the index from the store at every start.
 */
const readWhole = async (path: string): Promise<Buffer> => {
  const file = await open(path, 'r');
  try {
    const { size } = await file.stat();
    const buf = Buffer.allocUnsafe(size);
    let at = 0;
    while (at < size) {
      const { bytesRead } = await file.read(buf, at, Math.min(READ_PART, size - at), at);
      // Cut shorter meanwhile (it is replaced by rename, never truncated): what was read fails its check.
      if (bytesRead === 0) return buf.subarray(0, at);
      at += bytesRead;
    }
    return buf;
  } finally {
    await file.close();
  }
};
