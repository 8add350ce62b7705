import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lockDirectory } from '../../packages/server/src/store/fs/dir-lock.ts';

// A data directory on a disk with no byte free: a tmpfs of its own, filled up (root only;
// skipped elsewhere).

let mount: string | undefined;
const mounted = (() => {
  if (process.getuid?.() !== 0) return false;
  try {
    execFileSync('mount', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/** Fills the tmpfs until a write fails, returning the filler's path. */
const fill = (dir: string): string => {
  const filler = join(dir, 'filler');
  try {
    execFileSync('dd', ['if=/dev/zero', `of=${filler}`, 'bs=4k'], { stdio: 'ignore' });
  } catch {
    // "No space left on device": full.
  }
  // The last partial block too.
  try {
    for (;;) writeFileSync(filler, 'x', { flag: 'a' });
  } catch {
    // Full to the byte.
  }
  return filler;
};

describe.skipIf(!mounted)('filesystem backend on a full disk', () => {
  beforeAll(async () => {
    mount = await mkdtemp(join(tmpdir(), 'cairn-full-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mount]);
  });
  afterAll(async () => {
    if (!mount) return;
    execFileSync('umount', [mount]);
    await rm(mount, { recursive: true, force: true });
  });

  it('a LOCK it could not write is not left behind, and the error names it', async () => {
    const dir = join(mount as string, 'data');
    await mkdir(dir);
    const filler = fill(mount as string);
    const failed = await lockDirectory(dir).then(
      () => null,
      (error: Error) => error,
    );
    expect((failed as NodeJS.ErrnoException).code).toBe('ENOSPC');
    expect(readdirSync(dir)).not.toContain('LOCK');
    expect(failed?.message).toContain(join(dir, 'LOCK'));
    // Space again: the next start takes the lock at once, not after the 20 s stale window.
    await rm(filler);
    const started = Date.now();
    const lock = await lockDirectory(dir);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(existsSync(join(dir, 'LOCK'))).toBe(true);
    lock.release();
  });
});
