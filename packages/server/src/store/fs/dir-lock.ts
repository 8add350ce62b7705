import { closeSync, openSync, readFileSync, realpathSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

/** Who holds a data directory's lock, as its LOCK file says. */
export interface LockHolder {
  pid: number;
  host?: string;
  /** When it took the lock (ISO 8601). */
  since?: string;
}

export class DirectoryLockedError extends Error {
  /** The live process holding the lock, when the LOCK file names one. */
  readonly holder: LockHolder | null;

  constructor(message: string, holder: LockHolder | null = null) {
    super(message);
    this.name = 'DirectoryLockedError';
    this.holder = holder;
  }
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else — still alive.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** Directories this process holds, so that a LOCK naming our own pid can be told apart. */
const heldHere = new Set<string>();

/** What a LOCK file says; nothing when it is missing, unreadable or half-written (its writer died first). */
const readLock = (path: string): Partial<LockHolder> => {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Partial<LockHolder>;
  } catch {
    return {};
  }
};

/**
 * The live process on this host that holds `dir`'s lock, or null (no lock, or one left by a
 * dead process or under this process's own pid, which the next lockDirectory takes over). Looking takes no lock: by the time
 * the answer is used, the holder may have gone.
 */
export const lockHolder = (dir: string): LockHolder | null => {
  const owner = readLock(join(dir, 'LOCK'));
  const pid = owner.pid ?? 0;
  // Our own pid in a lock this process does not hold is stale, as lockDirectory takes it.
  if (pid <= 0 || pid === process.pid || owner.host !== hostname() || !alive(pid)) return null;
  return { pid, host: owner.host, ...(owner.since ? { since: owner.since } : {}) };
};

/**
 * An exclusive lock on the data directory: a LOCK file created with O_EXCL, holding the
 * owner's pid and host. A lock left by a dead process (after kill -9) is taken over; a lock
 * held by our own pid is stale too (a container restarting as pid 1 again).
 */
export const lockDirectory = (dir: string): (() => void) => {
  const path = join(dir, 'LOCK');
  const real = realpathSync(dir);
  if (heldHere.has(real)) throw new DirectoryLockedError(`data directory ${dir} is in use by this process (pid ${process.pid})`);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      writeSync(fd, JSON.stringify({ pid: process.pid, host: hostname(), since: new Date().toISOString() }));
      closeSync(fd);
      heldHere.add(real);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        heldHere.delete(real);
        try {
          unlinkSync(path);
        } catch {
          // Already gone: nothing to release.
        }
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const owner = readLock(path);
    const pid = owner.pid ?? 0;
    if (pid > 0 && pid !== process.pid && owner.host === hostname() && alive(pid)) {
      throw new DirectoryLockedError(
        `data directory ${dir} is in use by process ${pid}; stop that server or choose another --data-dir`,
        { pid, host: owner.host, ...(owner.since ? { since: owner.since } : {}) },
      );
    }
    if (pid > 0 && owner.host !== undefined && owner.host !== hostname()) {
      throw new DirectoryLockedError(
        `data directory ${dir} is locked by process ${pid} on host ${owner.host}; if that server is gone, remove ${path}`,
        { pid, host: owner.host, ...(owner.since ? { since: owner.since } : {}) },
      );
    }
    try {
      unlinkSync(path);
    } catch {
      // Another starter removed it first; retry the exclusive create.
    }
  }
  throw new DirectoryLockedError(`could not lock data directory ${dir}: another server is starting on it`);
};
