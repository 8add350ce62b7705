import { testableMs } from '../../domain/test-timing.ts';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, fstatSync, linkSync, openSync, readFileSync, readlinkSync, realpathSync, renameSync, unlinkSync, utimesSync, writeSync } from 'node:fs';
import { readFile, utimes } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { SettingError } from '../../domain/setting-error.ts';

/** Who holds a data directory's lock, as its LOCK file says. */
export interface LockHolder {
  pid: number;
  host?: string;
  /** When it took the lock (ISO 8601). */
  since?: string;
}

/**
 * A data directory another process holds: the setting is good, the directory busy until that
 * process stops, so the commands say it in one line and exit 1 (held).
 */
export class DirectoryLockedError extends SettingError {
  /** The live process holding the lock, when the LOCK file names one. */
  readonly holder: LockHolder | null;

  constructor(message: string, holder: LockHolder | null = null) {
    super(message, { held: true });
    this.name = 'DirectoryLockedError';
    this.holder = holder;
  }
}

/**
 * A lock whose holder cannot be judged by its pid (another host, another pid namespace: every
 * container's server is pid 1) is judged by its LOCK file's mtime, which the holder refreshes
 * every STALE_MS / 4: one not refreshed for STALE_MS was left by a process that is gone.
 * CAIRN_TEST_LOCK_STALE_MS shortens the window for tests alone.
 */
const STALE_MS = testableMs('CAIRN_TEST_LOCK_STALE_MS', 20_000);
const REFRESH_MS = Math.max(10, Math.floor(STALE_MS / 4));
/** How often a starter looks at a LOCK it waits on. */
const WATCH_MS = Math.max(10, Math.min(1_000, Math.floor(STALE_MS / 20)));

/** What a LOCK file holds. `boot` and `pidns` say in which pid space `pid` means anything (Linux). */
interface LockFile extends Partial<LockHolder> {
  token?: string;
  boot?: string;
  pidns?: string;
}

const readOr = (read: () => string): string | undefined => {
  try {
    return read().trim() || undefined;
  } catch {
    return undefined;
  }
};
/** This kernel's boot (containers share it with their host), and this process's pid namespace. */
const BOOT = readOr(() => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8'));
const PIDNS = readOr(() => readlinkSync('/proc/self/ns/pid'));

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

interface Seen {
  raw: string;
  mtimeMs: number;
  owner: LockFile;
}

/** The LOCK file as it is now; null when there is none. Half-written (its writer died first, or is writing), it says nothing. */
const look = (path: string): Seen | null => {
  try {
    // Opened first: on NFS, an open fetches the file's attributes afresh (close-to-open), a stat may not.
    const fd = openSync(path, 'r');
    let raw: string;
    let mtimeMs: number;
    try {
      mtimeMs = fstatSync(fd).mtimeMs;
      raw = readFileSync(fd, 'utf8');
    } finally {
      closeSync(fd);
    }
    let owner: LockFile = {};
    try {
      const parsed = JSON.parse(raw) as unknown;
      if (parsed && typeof parsed === 'object') owner = parsed as LockFile;
    } catch {
      // Half-written: judged by its age alone.
    }
    return { raw, mtimeMs, owner };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
};

const holderOf = (owner: LockFile): LockHolder => ({
  pid: owner.pid ?? 0,
  ...(owner.host !== undefined ? { host: owner.host } : {}),
  ...(owner.since ? { since: owner.since } : {}),
});

/** Written by a process on this kernel (same boot), whose clock is ours. */
const sameMachine = (owner: LockFile): boolean => BOOT !== undefined && owner.boot === BOOT;

/**
 * Whether the LOCK's pid can be looked up here: the same kernel and pid namespace (or, for a
 * LOCK or system without them, the same host and a pid other than ours, as before).
 */
const pidMeansSomething = (owner: LockFile): boolean => {
  if ((owner.pid ?? 0) <= 0) return false;
  if (BOOT !== undefined && PIDNS !== undefined && owner.boot !== undefined && owner.pidns !== undefined) return owner.boot === BOOT && owner.pidns === PIDNS;
  return owner.host === hostname() && owner.pid !== process.pid;
};

type Verdict = 'live' | 'dead' | 'self' | 'unknown';

/** What the pid says of the holder: 'unknown' when only the LOCK's freshness can tell. */
const byPid = (owner: LockFile, real: string | null): Verdict => {
  if (!pidMeansSomething(owner)) return 'unknown';
  // Our own pid in our own pid space: this process, or an earlier one that had our pid and is gone.
  if (owner.pid === process.pid) return real !== null && heldHere.has(real) ? 'self' : 'dead';
  return alive(owner.pid as number) ? 'live' : 'dead';
};

/** When a LOCK last refreshed at `mtimeMs` goes stale, by our clock when it is the holder's too. */
const staleAt = (seen: Seen, now: number): number => (sameMachine(seen.owner) ? seen.mtimeMs + STALE_MS : now + STALE_MS);

/**
 * The live process that holds `dir`'s lock, or null (no lock, or one the next lockDirectory
 * takes over at once: left by a dead process on this host). A lock whose holder cannot be
 * judged by its pid is live while it is refreshed. Looking takes no lock: by the time the
 * answer is used, the holder may have gone.
 */
export const lockHolder = (dir: string): LockHolder | null => {
  let seen: Seen | null;
  try {
    seen = look(join(dir, 'LOCK'));
  } catch {
    return null;
  }
  if (seen === null) return null;
  let real: string | null = null;
  try {
    real = realpathSync(dir);
  } catch {
    // Gone meanwhile.
  }
  const verdict = byPid(seen.owner, real);
  if (verdict === 'live' || verdict === 'self') return holderOf(seen.owner);
  if (verdict === 'dead') return null;
  return Date.now() - seen.mtimeMs < STALE_MS ? holderOf(seen.owner) : null;
};

export interface DirectoryLock {
  /** Stops refreshing and removes the LOCK if it is still ours. */
  release(): void;
  /**
   * Throws the loss when another process has taken the lock over (this one was stopped past the
   * window); looks at the LOCK again only when the last refresh is older than a refresh period.
   */
  assertHeld(): void;
  /** Set once the lock was found taken over. */
  readonly lost: Error | null;
}

export interface LockOptions {
  /** Said while waiting for a LOCK to go stale. */
  info?: (message: string) => void;
  /** Called once when the LOCK is found to hold another process's token: stop writing at once. */
  onLost?: (error: Error) => void;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Creates LOCK holding `content`, or says it exists. */
const create = (path: string, content: string): boolean => {
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  try {
    const bytes = Buffer.from(content);
    for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at);
    closeSync(fd);
  } catch (error) {
    // Left empty or half-written (a full disk), it would make the next start wait out the
    // stale window for a holder that never was: it goes, and the error names it.
    try {
      closeSync(fd);
    } catch {
      // Closed already.
    }
    try {
      unlinkSync(path);
    } catch {
      // Gone already.
    }
    const cause = error as NodeJS.ErrnoException;
    // No `cause`: the log's error serializer would repeat its message after this one.
    throw Object.assign(new Error(`could not write the lock file ${path}: ${cause.message}`), cause.code ? { code: cause.code } : {});
  }
  return true;
};

/**
 * Removes the LOCK judged stale, and only that one: renamed aside first (one rename wins), then
 * put back if what was renamed is not what was judged (another starter's new lock, or a holder
 * that refreshed it meanwhile).
 */
const removeStale = (path: string, judged: Seen, token: string): void => {
  const aside = `${path}.stale-${token}`;
  try {
    renameSync(path, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  const moved = look(aside);
  if (moved && (moved.raw !== judged.raw || moved.mtimeMs !== judged.mtimeMs)) {
    try {
      linkSync(aside, path);
    } catch {
      // A third starter created a lock meanwhile: the one put aside is that lock's loser.
    }
  }
  try {
    unlinkSync(aside);
  } catch {
    // Already gone.
  }
};

/**
 * An exclusive lock on the data directory: a LOCK file created with O_EXCL, holding the
 * owner's pid, host, pid space and a token of its own, its mtime refreshed while it is held.
 * A lock of a dead process on this host (after kill -9) is taken over at once; a live one is
 * refused at once. A lock whose pid means nothing here (another host; a container, pid 1 in a
 * pid namespace of its own) is watched: refreshed within STALE_MS, it is refused; left alone
 * that long, it is taken over. The holder that finds its token gone stops (onLost).
 */
export const lockDirectory = async (dir: string, options: LockOptions = {}): Promise<DirectoryLock> => {
  const path = join(dir, 'LOCK');
  const real = realpathSync(dir);
  if (heldHere.has(real)) throw new DirectoryLockedError(`data directory ${dir} is in use by this process (pid ${process.pid})`);
  const token = randomBytes(12).toString('hex');
  const content = JSON.stringify({
    pid: process.pid,
    host: hostname(),
    since: new Date().toISOString(),
    token,
    ...(BOOT !== undefined ? { boot: BOOT } : {}),
    ...(PIDNS !== undefined ? { pidns: PIDNS } : {}),
  });
  let waitedFor: string | null = null;
  for (let attempt = 0; attempt < 20; attempt++) {
    if (create(path, content)) {
      // Another starter that judged an earlier LOCK stale may have renamed ours aside by mistake.
      if (look(path)?.raw === content) return hold(dir, path, real, token, options);
      continue;
    }
    const seen = look(path);
    if (seen === null) continue;
    const verdict = byPid(seen.owner, real);
    const holder = holderOf(seen.owner);
    if (verdict === 'self') throw new DirectoryLockedError(`data directory ${dir} is in use by this process (pid ${process.pid})`);
    if (verdict === 'live') {
      throw new DirectoryLockedError(`data directory ${dir} is in use by process ${holder.pid}; stop that server or choose another --data-dir`, holder);
    }
    if (verdict === 'unknown') {
      let now = Date.now();
      const until = staleAt(seen, now);
      if (until > now && waitedFor !== seen.raw) {
        waitedFor = seen.raw;
        const who = holder.pid > 0 ? `process ${holder.pid} on host ${holder.host ?? '?'}` : 'a process that is still writing it';
        options.info?.(`waiting up to ${Math.ceil((until - now) / 1000)} s for the LOCK of ${dir} (held by ${who}) to go stale`);
      }
      let current: Seen | null = seen;
      while (now < until) {
        await sleep(Math.min(WATCH_MS, until - now));
        current = look(path);
        if (current === null || current.raw !== seen.raw) break;
        if (current.mtimeMs !== seen.mtimeMs) {
          throw new DirectoryLockedError(
            `data directory ${dir} is locked by ${holder.pid > 0 ? `process ${holder.pid} on host ${holder.host ?? '?'}` : 'another process'}, which is alive (it keeps refreshing ${path}); stop that server or choose another --data-dir`,
            holder,
          );
        }
        now = Date.now();
      }
      // Gone, or replaced by another lock: judge that one.
      if (current === null || current.raw !== seen.raw) continue;
    }
    removeStale(path, seen, token);
  }
  throw new DirectoryLockedError(`could not lock data directory ${dir}: other servers are starting on it`);
};

/** The lock taken: refreshed until released, and watched for another process's takeover. */
const hold = (dir: string, path: string, real: string, token: string, options: LockOptions): DirectoryLock => {
  heldHere.add(real);
  let released = false;
  let lost: Error | null = null;
  let confirmed = Date.now();
  let refreshing = false;
  const lose = (): Error => {
    if (lost) return lost;
    lost = new Error(`the LOCK of data directory ${dir} was taken over by another process (this one did not refresh it for ${STALE_MS / 1000} s): stopping, as two servers must not write one directory`);
    clearInterval(timer);
    heldHere.delete(real);
    options.onLost?.(lost);
    return lost;
  };
  const mine = (raw: string): boolean => {
    try {
      return (JSON.parse(raw) as LockFile).token === token;
    } catch {
      return false;
    }
  };
  const refresh = async (): Promise<void> => {
    if (released || lost || refreshing) return;
    refreshing = true;
    // Ours as of when we looked, not as of when the look's answer came back: a process stopped
    // between the two (SIGSTOP, a frozen VM) may find its LOCK taken over meanwhile, and a
    // confirmation stamped on waking would let assertHeld pass a write without looking again.
    const asked = Date.now();
    try {
      const raw = await readFile(path, 'utf8');
      if (released || lost) return;
      if (!mine(raw)) {
        lose();
        return;
      }
      const now = new Date();
      await utimes(path, now, now);
      confirmed = asked;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' && !released) {
        // The whole directory deleted under us is no takeover: its writes fail on their own.
        if (existsSync(real)) lose();
        else clearInterval(timer);
      }
      // Another error (a flaky network filesystem): tried again at the next refresh.
    } finally {
      refreshing = false;
    }
  };
  const timer = setInterval(() => void refresh(), REFRESH_MS);
  timer.unref();
  return {
    get lost() {
      return lost;
    },
    assertHeld() {
      if (lost) throw lost;
      if (released || Date.now() - confirmed < REFRESH_MS * 2) return;
      // The timer has not run for a while (this process was stopped, or its loop blocked): look now.
      const asked = Date.now();
      let raw: string | null = null;
      try {
        raw = readFileSync(path, 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return;
      }
      if (raw === null && !existsSync(real)) return;
      if (raw === null || !mine(raw)) throw lose();
      try {
        const now = new Date();
        utimesSync(path, now, now);
        confirmed = asked;
      } catch {
        // Tried again at the next refresh.
      }
    },
    release() {
      if (released) return;
      released = true;
      clearInterval(timer);
      if (lost) return;
      heldHere.delete(real);
      try {
        if (mine(readFileSync(path, 'utf8'))) unlinkSync(path);
      } catch {
        // Already gone: nothing to release.
      }
    },
  };
};
