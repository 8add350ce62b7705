import { constants } from 'node:fs';
import { access, lstat, readlink, realpath, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve, sep } from 'node:path';
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

/** Symbolic links followed before giving up, as the kernel's own limit (ELOOP) is about. */
const MAX_LINK_HOPS = 40;

/**
 * The file an export's output names, symbolic links followed: a link's target is what the
 * archive replaces (renaming over the link itself would put a regular file in its place and
 * leave its target as it was). A link whose target does not exist yet is followed too: the
 * archive becomes that target. The answer is absolute, its directory's own links resolved.
 */
const followLinks = async (path: string): Promise<string> => {
  let current = resolve(path);
  for (let hops = 0; ; hops++) {
    const here = await lstat(current).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return null;
      throw usage(`cannot write the archive to ${path}: ${fileErrorReason(error)}`);
    });
    if (!here?.isSymbolicLink()) break;
    if (hops >= MAX_LINK_HOPS) throw usage(`cannot write the archive to ${path}: too many levels of symbolic links`);
    current = resolve(dirname(current), await readlink(current));
  }
  const parent = await realpath(dirname(current)).catch(() => null);
  const parentStats = parent === null ? null : await stat(parent).catch(() => null);
  if (parent === null || !parentStats?.isDirectory()) throw usage(`cannot write the archive to ${path}: there is no directory ${dirname(current)}`);
  return join(parent, basename(current));
};

/**
 * Refuses an export's output that cannot become a file, and answers the file to write (links
 * followed, see followLinks): a directory (the archive would be written whole beside it, then
 * fail to take the directory's name), a path whose directory does not exist, or something
 * other than a regular file (a FIFO, a device such as /dev/null, a socket), which the export
 * would replace with a regular file, since it writes a temporary file and renames it over the
 * output (standard output streams into any of them: `cairn export > PATH`). Checked before the
 * export starts, so nothing is read for nothing.
 */
export const checkOutputFile = async (path: string): Promise<string> => {
  const target = await followLinks(path);
  const there = await stat(target).catch(() => null);
  if (there?.isDirectory()) throw usage(`cannot write the archive to ${path}: it is a directory; name a file, such as ${join(path, 'cairn.jsonl')}`);
  if (there && !there.isFile()) {
    throw usage(`cannot write the archive to ${path}: it is not a regular file (a FIFO, a device or a socket), which the export would replace; to stream into it, use standard output: cairn export > ${path}`);
  }
  return target;
};

/**
 * Refuses, as bad usage, an output that resolves inside the data directory being exported
 * (`dataDir`): the archive would replace one of the store's own files, or be written among
 * them. `output` is checkOutputFile's answer (links followed).
 */
export const refuseOutputInside = async (output: string, dataDir: string, path: string): Promise<void> => {
  const dir = await realpath(dataDir).catch(() => resolve(dataDir));
  if (output === dir || output.startsWith(dir.endsWith(sep) ? dir : `${dir}${sep}`)) {
    throw usage(`cannot write the archive to ${path}: it is inside the data directory being exported (${dataDir}); write it elsewhere`);
  }
};
