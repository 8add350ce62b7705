import { type FileHandle, open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { syncDirectory } from './segment-log.ts';

/**
 * Write `path` whole or not at all: `fill` writes `<path>.tmp`, which is synced and renamed
 * over `path`, and the directory is synced, so a crash leaves the previous file or the new one,
 * never half of one. A failure removes the temporary file.
 */
export const writeAtomically = async (path: string, fill: (file: FileHandle) => Promise<void>): Promise<void> => {
  const tmp = `${path}.tmp`;
  const file = await open(tmp, 'w', 0o600);
  try {
    await fill(file);
    await file.datasync();
  } catch (error) {
    await file.close();
    await rm(tmp, { force: true });
    throw error;
  }
  await file.close();
  await rename(tmp, path);
  await syncDirectory(dirname(path));
};
