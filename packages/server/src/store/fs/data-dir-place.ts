import { readdir, stat } from 'node:fs/promises';
import type { PlaceWithoutData } from '../../ports/backend.ts';
import { holdsStore } from './store-files.ts';

/**
 * The data directory as the commands see it before they open it (BackendModule's place
 * methods): whether it is there, and whether it holds a store. Opening makes the directory,
 * and its missing parents, when they are not there, and writes a log into whatever directory
 * it is given.
 */

/** Where the filesystem backend keeps its data when CAIRN_DATA_DIR is unset. */
export const DEFAULT_DATA_DIR = '/data/.cairn';

/** The setting that named `dataDir`: `cairn serve --data-dir` wins over the variable. */
const named = (dataDir: string): string => {
  const variable = process.env.CAIRN_DATA_DIR;
  if (variable === dataDir) return 'CAIRN_DATA_DIR';
  return variable || dataDir !== DEFAULT_DATA_DIR ? '--data-dir' : 'the default, CAIRN_DATA_DIR unset';
};

const orNull = <T>(stats: Promise<T>): Promise<T | null> =>
  stats.catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });

/**
 * BackendModule.unusablePlace: a data directory that names a file, or lies under one. Opening
 * would fail deep inside (EEXIST, ENOTDIR from mkdir) after reading the search index in vain.
 * Any other failure to look (permissions) is left for opening to report.
 */
export const unusableDataDir = async (dataDir: string): Promise<string | null> => {
  try {
    const stats = await stat(dataDir);
    if (stats.isDirectory()) return null;
    return `the data directory ${dataDir} (${named(dataDir)}) is ${stats.isFile() ? 'a file, ' : ''}not a directory`;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOTDIR') return null;
    return `the data directory ${dataDir} (${named(dataDir)}) cannot be made: part of its path is a file, not a directory`;
  }
};

/** BackendModule.missingPlace: a data directory that is not there (unusableDataDir tells of one that cannot be). */
export const missingDataDir = async (dataDir: string): Promise<string | null> => {
  const stats = await orNull(stat(dataDir));
  return stats === null ? `the data directory ${dataDir} (${named(dataDir)}) does not exist` : null;
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
  return { reason: `the data directory ${dataDir} (${named(dataDir)}) is not a Cairn data directory (${what})`, empty };
};
