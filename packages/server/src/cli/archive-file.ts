import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { CommandError, EXIT_USAGE } from './command-exit.ts';

/**
 * The checks `cairn import` and `cairn export` make on the files they are given before they
 * open the store: each bad file gets its own one-line answer instead of a stack trace from
 * deep inside the archive reader (services/archive/read-archive.ts).
 */

const usage = (message: string): CommandError => new CommandError(message, EXIT_USAGE);

/** Why a file could not be opened, in words: for every command that reads a file it is given (`cairn write-batch` too). */
export const fileErrorReason = (error: unknown): string => {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'it is a directory';
  return (error as Error).message;
};

/**
 * Refuses, as a usage error, an archive argument that is not a regular file: standard input
 * (`-`), a path that does not exist, a directory, or a pipe (`/dev/stdin`, `<(zcat a.gz)`),
 * which cannot work because the import reads the archive more than once: whole to check it
 * before it writes anything, then again to write. What the file holds is the archive reader's
 * to check (services/archive/read-archive.ts), a line too long to hold included.
 */
export const checkArchiveFile = async (path: string): Promise<void> => {
  const saveIt = 'the import reads an archive twice (it checks all of it before writing anything), so save it to a file first';
  if (path === '-') throw usage(`cairn import does not read standard input: ${saveIt}`);
  try {
    const stats = await stat(path);
    if (stats.isDirectory()) throw usage(`cannot import ${path}: it is a directory, not an archive`);
    if (!stats.isFile()) throw usage(`cannot import ${path}: it is not a regular file (a pipe?); ${saveIt}`);
    // Readable by this process: stat does not say.
    await access(path, constants.R_OK);
  } catch (error) {
    throw error instanceof CommandError ? error : usage(`cannot import ${path}: ${fileErrorReason(error)}`);
  }
};

/**
 * Refuses an export's output that cannot become a file: a directory (the archive would be
 * written whole to `<dir>.partial`, then fail to take the directory's name), or a path whose
 * directory does not exist. Checked before the export starts, so nothing is read for nothing.
 */
export const checkOutputFile = async (path: string): Promise<void> => {
  const where = await stat(path).catch(() => null);
  if (where?.isDirectory()) throw usage(`cannot write the archive to ${path}: it is a directory; name a file, such as ${join(path, 'cairn.jsonl')}`);
  const parent = await stat(dirname(path)).catch(() => null);
  if (!parent?.isDirectory()) throw usage(`cannot write the archive to ${path}: there is no directory ${dirname(path)}`);
};
