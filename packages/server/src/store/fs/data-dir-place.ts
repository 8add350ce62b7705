import { lstat, readdir, rm, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { holdsStore } from './store-files.ts';

/**
 * The data directory as the commands see it before they open it (BackendModule's place
 * methods): whether it is there, whether it holds a store, and how to take back what opening
 * it made. Opening makes the directory, and its missing parents, when they are not there, and
 * writes a log into whatever directory it is given.
 */

const named = (): string => (process.env.CAIRN_DATA_DIR ? 'CAIRN_DATA_DIR' : 'the default, CAIRN_DATA_DIR unset');

const orNull = <T>(stats: Promise<T>): Promise<T | null> =>
  stats.catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });

/** BackendModule.missingPlace: a data directory that is not there, or not a directory. */
export const missingDataDir = async (dataDir: string): Promise<string | null> => {
  const stats = await orNull(stat(dataDir));
  if (stats === null) return `the data directory ${dataDir} (${named()}) does not exist`;
  return stats.isDirectory() ? null : `the data directory ${dataDir} (${named()}) is not a directory`;
};

/** BackendModule.placeWithoutData: a directory that is there and holds no store (empty, or other files). */
export const dataDirWithoutStore = async (dataDir: string): Promise<string | null> => {
  const names = await readdir(dataDir).catch(() => null);
  // Missing or unreadable: missingPlace, or opening, says so.
  if (names === null || holdsStore(names)) return null;
  const what = names.length === 0 ? 'it is empty' : 'it holds other files and no store';
  return `the data directory ${dataDir} (${named()}) is not a Cairn data directory (${what})`;
};

/**
 * BackendModule.undoNewPlace: the first directory on the way to `dataDir` that is not there
 * yet, found before opening, is what opening makes (with everything below it); removing it
 * takes all of that back and touches nothing that was there before. Null when the data
 * directory is there: it is never removed.
 */
export const undoNewDataDir = async (dataDir: string): Promise<(() => Promise<void>) | null> => {
  let made: string | null = null;
  // lstat: a link is there, wherever it points, and is not the import's to remove.
  for (let dir = resolve(dataDir); (await orNull(lstat(dir))) === null; dir = dirname(dir)) {
    made = dir;
    if (dirname(dir) === dir) break;
  }
  const top = made;
  return top === null ? null : () => rm(top, { recursive: true, force: true });
};
