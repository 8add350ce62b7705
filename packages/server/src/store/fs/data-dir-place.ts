import { readdir, stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { SettingError } from '../../domain/setting-error.ts';
import { userDataDir } from '../../domain/user-data-dir.ts';
import type { PlaceWithoutData } from '../../ports/backend.ts';
import { DirectoryLockedError } from './dir-lock.ts';
import { holdsStore } from './store-files.ts';

/**
 * The data directory as the commands see it before they open it (BackendModule's place
 * methods): whether it is there, and whether it holds a store. Opening makes the directory,
 * and its missing parents, when they are not there, and writes a log into whatever directory
 * it is given.
 */

/** Where the filesystem backend keeps its data when CAIRN_DATA_DIR is unset. */
export const DEFAULT_DATA_DIR = '/data/.cairn';

/** The setting that named `dataDir`: `--data-dir` wins over the variable, which wins over a default. */
const named = (dataDir: string): string => {
  const variable = process.env.CAIRN_DATA_DIR;
  if (variable === dataDir) return 'CAIRN_DATA_DIR';
  if (!variable && dataDir === DEFAULT_DATA_DIR) return 'the default, CAIRN_DATA_DIR unset';
  // `cairn mcp` passes its own default as if it were given (mcp-run.ts): not a flag the user typed.
  if (!variable && dataDir === userDataDir(process.env)) return "cairn mcp's default, CAIRN_DATA_DIR unset";
  return '--data-dir';
};

/** What to do instead, for the setting that named the data directory. */
const another = (setting: string): string => {
  if (setting === '--data-dir') return 'choose one you can write with --data-dir, e.g. --data-dir ./.cairn';
  if (setting === 'CAIRN_DATA_DIR') return 'set CAIRN_DATA_DIR to one you can write, e.g. CAIRN_DATA_DIR=./.cairn';
  return 'choose one you can write with --data-dir ./.cairn or CAIRN_DATA_DIR=./.cairn';
};

/**
 * A data directory this process may not make or write (permissions, a read-only file system):
 * a setting to change, which every command reports in one line and exits 2.
 */
export class DataDirUnwritableError extends SettingError {
  readonly code: string;

  constructor(message: string, code: string) {
    super(message);
    this.name = 'DataDirUnwritableError';
    this.code = code;
  }
}

const UNWRITABLE: Record<string, string> = { EACCES: 'permission denied', EPERM: 'operation not permitted', EROFS: 'read-only file system' };

/**
 * A failure to make or lock the data directory, in words naming the directory, the setting
 * that named it, and what to do: not writable, a DataDirUnwritableError; held by another live
 * process, a DirectoryLockedError naming it. Anything else is answered as it is.
 */
export const dataDirFailure = (dataDir: string, error: unknown): unknown => {
  const setting = named(dataDir);
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code !== undefined && UNWRITABLE[code] !== undefined) {
    // The path the system call named (a parent being made, the LOCK file), when not the directory itself.
    const path = (error as NodeJS.ErrnoException).path;
    const at = path !== undefined && path !== dataDir ? ` (at ${path})` : '';
    return new DataDirUnwritableError(`the data directory ${dataDir} (${setting}) cannot be written: ${UNWRITABLE[code]}${at}; ${another(setting)}`, code);
  }
  if (error instanceof DirectoryLockedError && error.holder !== null && error.holder.pid > 0) {
    const { pid, host } = error.holder;
    // The host when it is another, or when the holder has this very pid (another container,
    // pid 1 like this one, given the same host name): "process 1" alone would read as ourselves.
    const where = host !== undefined && (host !== hostname() || pid === process.pid) ? ` on host ${host}` : '';
    return new DirectoryLockedError(
      `the data directory ${dataDir} (${setting}) is in use by process ${pid}${where}; stop that server or choose another ${setting === 'CAIRN_DATA_DIR' ? 'with CAIRN_DATA_DIR' : setting === '--data-dir' ? '--data-dir' : 'with --data-dir or CAIRN_DATA_DIR'}`,
      error.holder,
    );
  }
  return error;
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
