import { closeSync, constants, fstatSync, openSync, readFileSync } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { lockHolder } from '../store/fs/dir-lock.ts';

/**
 * The note in which the `cairn mcp` that has a data directory open says how the other
 * processes on that directory reach it (mcp-local.ts): its pid, a loopback address and a key it
 * made up. Kept apart from mcp-local.ts, which loads the whole server, so that the client
 * commands can read it without.
 */
export interface OwnerNote {
  pid: number;
  url: string;
  key: string;
  /** The namespace its calls work in (CAIRN_NAMESPACE): the others forward only in the same one. */
  namespace: string;
}

export const OWNER_NOTE = 'mcp-owner.json';

/** A loopback address: the note names a process on this machine, never another host. */
const loopback = (url: string): boolean => {
  if (!URL.canParse(url)) return false;
  const { protocol, hostname } = new URL(url);
  return protocol === 'http:' && (hostname === '127.0.0.1' || hostname === '[::1]' || hostname === 'localhost');
};

/**
 * The note, when it is one this user's `cairn mcp` wrote: a regular file of this user's (not a
 * link), naming a loopback address. A note someone else could write (a data directory made
 * under /tmp by another user) would send this user's memory wherever it said.
 */
export const readNote = (dir: string): OwnerNote | null => {
  let fd: number | undefined;
  try {
    fd = openSync(join(dir, OWNER_NOTE), constants.O_RDONLY | constants.O_NOFOLLOW);
    const stats = fstatSync(fd);
    if (!stats.isFile() || (process.getuid !== undefined && stats.uid !== process.getuid())) return null;
    const note = JSON.parse(readFileSync(fd, 'utf8')) as Partial<OwnerNote>;
    const whole = typeof note.pid === 'number' && typeof note.url === 'string' && typeof note.key === 'string' && typeof note.namespace === 'string';
    return whole && loopback(note.url as string) ? (note as OwnerNote) : null;
  } catch {
    // Missing, or half-written by an owner that died: no owner to forward to.
    return null;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
};

/** Written whole (a reader never sees half of it), readable by this user alone: it holds a key. */
export const writeNote = async (dir: string, note: OwnerNote): Promise<void> => {
  const temp = join(dir, `${OWNER_NOTE}.${process.pid}.tmp`);
  await writeFile(temp, JSON.stringify(note), { mode: 0o600 });
  await rename(temp, join(dir, OWNER_NOTE));
};

/** Removes the note if it is still this process's (a later owner may have written its own). */
export const removeNote = async (dir: string): Promise<void> => {
  if (readNote(dir)?.pid === process.pid) await rm(join(dir, OWNER_NOTE), { force: true });
};

/** The `cairn mcp` serving `dir` now: the live holder of its lock, when its note is that process's. */
export const servingProcess = (dir: string): OwnerNote | null => {
  const holder = lockHolder(dir);
  const note = holder === null ? null : readNote(dir);
  return note !== null && note.pid === holder?.pid ? note : null;
};
