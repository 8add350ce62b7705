import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync, statfsSync } from 'node:fs';
import { join } from 'node:path';

/** Linux's statfs type for tmpfs. */
const TMPFS_MAGIC = 0x01021994;
/** A run's directory left untouched this long was left by a run that was killed: it is removed. */
const ABANDONED_MS = 24 * 3600_000;
/** The room the suite's temporary files need at their peak, with margin (measured peak: see README, "the two commands"). */
const ROOM_NEEDED = 4 * 1024 ** 3;

/**
 * A directory for the suites' temporary files (TMPDIR) in memory, when the machine has a tmpfs
 * at /dev/shm with room to spare; undefined otherwise, or when TMPDIR is set already (the
 * caller's choice stands). Every data directory, PostgreSQL cluster and S3 bucket the suites
 * make lives under TMPDIR: on a disk each file they create, sync and remove costs the kernel
 * journal work. On a 2-core host a fresh clone's suite took 1,034–1,192 s in memory against
 * 1,300–1,338 s on the disk the same evening (system CPU 285–307 s against 484–491 s). What
 * the tests check does not change: a killed process leaves what it wrote in the page cache on
 * either, and the bench and `npm run reliability`,
 * which measure the disk, keep the machine's own TMPDIR. Made like /tmp (sticky, writable by
 * all): PostgreSQL's clusters run as the postgres user when the suite runs as root.
 */
export const memoryTmpdir = (): string | undefined => {
  if (process.env.TMPDIR) return undefined;
  try {
    const fs = statfsSync('/dev/shm');
    if (fs.type !== TMPFS_MAGIC || fs.bavail * fs.bsize < ROOM_NEEDED) return undefined;
    removeAbandoned();
    const dir = mkdtempSync(join('/dev/shm', 'cairn-test-'));
    chmodSync(dir, 0o1777);
    return dir;
  } catch {
    return undefined;
  }
};

/** A run interrupted (Ctrl-C) ends without its clean-up, leaving its directory in memory: a later run removes it a day on. */
const removeAbandoned = (): void => {
  for (const name of readdirSync('/dev/shm').filter((n) => n.startsWith('cairn-test-'))) {
    const dir = join('/dev/shm', name);
    if (Date.now() - statSync(dir).mtimeMs > ABANDONED_MS) rmSync(dir, { recursive: true, force: true });
  }
};
