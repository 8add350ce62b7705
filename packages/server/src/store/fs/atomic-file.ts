import { type FileHandle, open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { crc32 } from 'node:zlib';
import { syncDirectory } from './segment-log.ts';

/** How files are opened for writing: node:fs/promises' `open`, or a wrapper of it (tests fill the disk). */
export type OpenFile = (path: string, flags: string | number, mode: number) => Promise<FileHandle>;

export interface AtomicWriteOptions {
  openFile?: OpenFile;
  /**
   * Read the whole file back before the rename and compare its checksum with what was written
   * (a compacted base, whose commit deletes the log it replaces); otherwise only its size is checked.
   */
  readBack?: boolean;
}

/** Bytes read at a time when a written file is read back to check it. */
const CHECK_BYTES = 1024 * 1024;

/**
 * Bytes written to the temporary file that are synced (fdatasync) before more are written.
 * These files (a checkpoint, the search index, a compacted base) are written while the log
 * takes writes, each acknowledged once its O_DSYNC write returns; one sync of tens of
 * megabytes at the end held the log's writes behind it on the same disk (ext4 commits its
 * journal in order). On the bench host (loaded), 60 KB O_DSYNC writes beside a 40 MB file
 * synced once were held up to 75–137 ms (median of 5 runs 90); synced every 2 MB, 9–23 ms
 * (median 16). Each sync costs a journal commit: 200 MB took 0.6–0.9 s synced once,
 * 1.2–1.4 s every 2 MB (1.7–2.9 s every 1 MB).
 */
export const SYNC_EVERY_BYTES = 2 * 1024 * 1024;

/**
 * Write all of `data` at `position`. One write call may write fewer bytes than asked (Linux
 * returns a short count when the disk fills part way), and the rest must follow or the call
 * fail: a file cut short that was then committed has lost what it was meant to hold.
 */
export const writeFully = async (file: FileHandle, data: Buffer, position: number): Promise<void> => {
  let written = 0;
  while (written < data.length) {
    const { bytesWritten } = await file.write(data, written, data.length - written, position + written);
    if (bytesWritten <= 0) throw new Error(`a write of ${data.length - written} bytes at byte ${position + written} wrote nothing`);
    written += bytesWritten;
  }
};

/**
 * A file written front to back in full (writeFully), that knows how many bytes and what
 * checksum it should hold, so writeAtomically can check it before committing it.
 */
export interface CheckedWriter {
  /** Append `data` (every byte, or fail). */
  write: (data: Buffer) => Promise<void>;
  /** Bytes written so far. */
  readonly size: number;
}

/**
 * Write `path` whole or not at all: `fill` writes `<path>.tmp`, which is synced, checked
 * against what was written (its size; with `readBack`, its checksum too), and only then renamed over
 * `path`; the directory is synced, so a crash leaves the previous file or the new one, never
 * half of one. A failure (a full disk among them) removes the temporary file and leaves
 * `path` as it was.
 *
 * A temporary file left by an earlier run, or anything planted at its name (a symbolic link
 * to a file outside the data directory), is removed first, and the new one is created
 * exclusively ('wx+': O_CREAT|O_EXCL, which never follows a symbolic link), so nothing is
 * ever written through a link.
 */
export const writeAtomically = async (
  path: string,
  fill: (file: CheckedWriter) => Promise<void>,
  { openFile = open, readBack = false }: AtomicWriteOptions = {},
): Promise<void> => {
  const tmp = `${path}.tmp`;
  await rm(tmp, { force: true });
  const file = await openFile(tmp, 'wx+', 0o600);
  let size = 0;
  let checksum = 0;
  /** Bytes written since the last sync. */
  let unsynced = 0;
  const writer: CheckedWriter = {
    write: async (data) => {
      // In parts that end where a sync is due, so a large chunk is synced part by part too.
      for (let at = 0; at < data.length; ) {
        const part = data.subarray(at, at + SYNC_EVERY_BYTES - unsynced);
        await writeFully(file, part, size);
        if (readBack) checksum = crc32(part, checksum);
        size += part.length;
        at += part.length;
        unsynced += part.length;
        if (unsynced >= SYNC_EVERY_BYTES) {
          await file.datasync();
          unsynced = 0;
        }
      }
    },
    get size() {
      return size;
    },
  };
  try {
    await fill(writer);
    await file.datasync();
    await checkWritten(file, tmp, size, readBack ? checksum : null);
  } catch (error) {
    await file.close().catch(() => undefined);
    await rm(tmp, { force: true });
    throw error;
  }
  await file.close();
  await rename(tmp, path);
  await syncDirectory(dirname(path));
};

/** The file holds exactly the `size` bytes written (and, given `checksum`, reads back with it), or this throws. */
const checkWritten = async (file: FileHandle, path: string, size: number, checksum: number | null): Promise<void> => {
  const { size: onDisk } = await file.stat();
  if (onDisk !== size) throw new Error(`${path} holds ${onDisk} bytes where ${size} were written`);
  if (checksum === null) return;
  const buf = Buffer.allocUnsafe(Math.min(CHECK_BYTES, Math.max(size, 1)));
  let read = 0;
  let sum = 0;
  while (read < size) {
    const { bytesRead } = await file.read(buf, 0, Math.min(buf.length, size - read), read);
    if (bytesRead === 0) throw new Error(`${path} ends at byte ${read} where ${size} were written`);
    sum = crc32(buf.subarray(0, bytesRead), sum);
    read += bytesRead;
  }
  if (sum !== checksum) throw new Error(`${path} does not read back as written`);
};
