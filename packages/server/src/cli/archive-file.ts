import { constants as bufferConstants } from 'node:buffer';
import { type FileHandle, open, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { createGunzip } from 'node:zlib';
import { CommandError, EXIT_REFUSED, EXIT_USAGE } from './command-exit.ts';

/**
 * The checks `cairn import` and `cairn export` make on the files they are given before they
 * open the store: each bad file gets its own one-line answer instead of a stack trace from
 * deep inside the archive reader (services/archive/read-archive.ts).
 */

/** The most one read adds to a line being assembled: a file stream's 64 KiB chunk (gunzip's are 16 KiB). */
const READ_CHUNK = 64 * 1024;

/**
 * The longest archive line `cairn import` takes, in characters (UTF-16 code units: a
 * JavaScript string's length), derived from what can hold a line rather than from the limits
 * of what it holds:
 *
 * - An export writes an entry's whole history as one line, built as one string, so no export
 *   writes a line longer than V8's longest string (buffer.constants.MAX_STRING_LENGTH,
 *   2^29 − 24 on 64-bit Node, about 512 Mi characters).
 * - domain/limits.ts bounds no line below that: a version is at most about 0.5 MiB (a value of
 *   at most `valueBytes`, 512 KiB serialized, and names, tags and labels of a few KiB more),
 *   but nothing bounds how many versions an entry has (`historyLimitMax` is the size of a page
 *   of the history API, not of a history), and about a thousand of the largest versions
 *   reach the string limit.
 * - The archive reader also holds each line as one string, assembled by readline, which adds
 *   a whole read to the line before it looks for the line's end: a line within one read of
 *   the limit already fails there with "RangeError: Invalid string length".
 *
 * So the cap is the reader's own ceiling: any line an export can write and the reader can
 * read is under it, and a longer one (a gzip bomb, a file that is not an archive) is refused
 * before the reader tries to hold it.
 */
export const MAX_LINE_CHARS = bufferConstants.MAX_STRING_LENGTH - READ_CHUNK;

const usage = (message: string): CommandError => new CommandError(message, EXIT_USAGE);

/** Why a file could not be opened, in words. */
const reasonOf = (error: unknown): string => {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  return (error as Error).message;
};

/** The first two bytes of a gzip stream, as the reader tells one. */
const isGzip = async (file: FileHandle): Promise<boolean> => {
  const { bytesRead, buffer } = await file.read(Buffer.alloc(2), 0, 2, 0);
  return bytesRead === 2 && buffer[0] === 0x1f && buffer[1] === 0x8b;
};

/**
 * The number of the first line of `input` longer than `limit` characters, or null. It reads
 * the text as the reader will (UTF-8, gunzipped), holding one chunk at a time, and stops at
 * the first line over the limit: a gzip bomb is not expanded past it.
 */
const firstLineOver = async (input: Readable, limit: number): Promise<number | null> => {
  const decoder = new StringDecoder('utf8');
  let line = 1;
  let length = 0;
  for await (const chunk of input) {
    const text = decoder.write(chunk as Buffer);
    let start = 0;
    for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
      if (length + end - start > limit) return line;
      line++;
      length = 0;
      start = end + 1;
    }
    length += text.length - start;
    if (length > limit) return line;
  }
  return null;
};

/**
 * Refuses, as a usage error, an archive argument that is not a regular file: standard input
 * (`-`), a path that does not exist, a directory, or a pipe (`/dev/stdin`, `<(zcat a.gz)`),
 * which cannot work because the import reads the archive twice: whole to check it before it
 * writes anything, then again to write. Then refuses an archive holding a line longer than
 * MAX_LINE_CHARS, which no export wrote and the reader cannot hold. The other problems of an
 * archive are the reader's to find and name.
 */
export const checkArchiveFile = async (path: string): Promise<void> => {
  const saveIt = 'the import reads an archive twice (it checks all of it before writing anything), so save it to a file first';
  if (path === '-') throw usage(`cairn import does not read standard input: ${saveIt}`);
  let file: FileHandle;
  try {
    const stats = await stat(path);
    if (stats.isDirectory()) throw usage(`cannot import ${path}: it is a directory, not an archive`);
    if (!stats.isFile()) throw usage(`cannot import ${path}: it is not a regular file (a pipe?); ${saveIt}`);
    file = await open(path, 'r');
  } catch (error) {
    throw error instanceof CommandError ? error : usage(`cannot import ${path}: ${reasonOf(error)}`);
  }
  const bytes = file.createReadStream({ start: 0 });
  let text: Readable = bytes;
  try {
    if (await isGzip(file)) {
      text = bytes.pipe(createGunzip());
      // A read error must reach the loop, which reads the gunzip side.
      bytes.once('error', (error) => text.destroy(error));
    }
    const tooLong = await firstLineOver(text, MAX_LINE_CHARS);
    if (tooLong !== null) {
      throw new CommandError(
        `cannot import ${path}: line ${tooLong} is longer than ${MAX_LINE_CHARS} characters, the most an import reads (nothing was imported)`,
        EXIT_REFUSED,
      );
    }
  } catch (error) {
    if (error instanceof CommandError) throw error;
    // A damaged gzip stream, or the disk: said as the reader would say it.
    throw new CommandError(`cannot import ${path}: cannot read the archive: ${(error as Error).message} (nothing was imported)`, EXIT_REFUSED);
  } finally {
    // Stopped early (a long line): nothing is left reading, and the file is closed.
    text.destroy();
    bytes.destroy();
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
