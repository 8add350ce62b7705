import { readdir, stat } from 'node:fs/promises';
import type { PlaceWithoutData } from '../../ports/backend.ts';
import { holdsStore } from './store-files.ts';

/**
 * The data directory as the commands see it before they open it (BackendModule's place
 * methods): whether it is there, and whether it holds a store. Opening makes the directory,
 * and its missing parents, when they are not there, and writes a log into whatever directory
 * it is given.
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

/** What a freshly made file system holds at its root: a volume mounted as the data directory starts with it. */
const NEW_VOLUME = new Set(['lost+found']);

/** BackendModule.placeWithoutData: a directory that is there and holds no store (empty, or other files). */
export const dataDirWithoutStore = async (dataDir: string): Promise<PlaceWithoutData | null> => {
  const names = await readdir(dataDir).catch(() => null);
  // Missing or unreadable: missingPlace, or opening, says so.
  if (names === null || holdsStore(names)) return null;
  const empty = names.every((name) => NEW_VOLUME.has(name));
  const what = empty ? 'it is empty' : 'it holds other files and no store';
  return { reason: `the data directory ${dataDir} (${named()}) is not a Cairn data directory (${what})`, empty };
};
