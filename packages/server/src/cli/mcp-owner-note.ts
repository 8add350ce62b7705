import { readFileSync } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
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
}

const NOTE_FILE = 'mcp-owner.json';

/**
 * Where `cairn mcp` keeps memory when nothing names a place: a directory of the user's own
 * (XDG's data home), since a client launches the command from wherever it runs, and the
 * server's default (/data/.cairn, a container's volume) is rarely writable on a workstation.
 */
export const userDataDir = (env: Record<string, string | undefined>): string => join(env.XDG_DATA_HOME || join(homedir(), '.local', 'share'), 'cairn');

export const readNote = (dir: string): OwnerNote | null => {
  try {
    const note = JSON.parse(readFileSync(join(dir, NOTE_FILE), 'utf8')) as Partial<OwnerNote>;
    return typeof note.pid === 'number' && typeof note.url === 'string' && typeof note.key === 'string' ? (note as OwnerNote) : null;
  } catch {
    // Missing, or half-written by an owner that died: no owner to forward to.
    return null;
  }
};

/** Written whole (a reader never sees half of it), readable by this user alone: it holds a key. */
export const writeNote = async (dir: string, note: OwnerNote): Promise<void> => {
  const temp = join(dir, `${NOTE_FILE}.${process.pid}.tmp`);
  await writeFile(temp, JSON.stringify(note), { mode: 0o600 });
  await rename(temp, join(dir, NOTE_FILE));
};

/** Removes the note if it is still this process's (a later owner may have written its own). */
export const removeNote = async (dir: string): Promise<void> => {
  if (readNote(dir)?.pid === process.pid) await rm(join(dir, NOTE_FILE), { force: true });
};

/** The `cairn mcp` serving `dir` now: the live holder of its lock, when its note is that process's. */
export const servingProcess = (dir: string): OwnerNote | null => {
  const holder = lockHolder(dir);
  const note = holder === null ? null : readNote(dir);
  return note !== null && note.pid === holder?.pid ? note : null;
};
