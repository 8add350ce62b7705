import { hostname } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { userDataDir } from '../../packages/server/src/domain/user-data-dir.ts';
import { DataDirUnwritableError, DEFAULT_DATA_DIR, dataDirFailure } from '../../packages/server/src/store/fs/data-dir-place.ts';
import { DirectoryLockedError } from '../../packages/server/src/store/fs/dir-lock.ts';

/**
 * A data directory that cannot be made, written or locked, in the words the commands print:
 * the directory, the setting that named it (`--data-dir`, CAIRN_DATA_DIR, or SPEC's default
 * with CAIRN_DATA_DIR unset), and what to do.
 */
const saved = process.env.CAIRN_DATA_DIR;
afterEach(() => {
  if (saved === undefined) delete process.env.CAIRN_DATA_DIR;
  else process.env.CAIRN_DATA_DIR = saved;
});

const errno = (code: string, path: string): NodeJS.ErrnoException => Object.assign(new Error(`${code}: mkdir '${path}'`), { code, path });

describe('dataDirFailure', () => {
  it('says SPEC\'s default cannot be written when CAIRN_DATA_DIR is unset, and how to choose another', () => {
    delete process.env.CAIRN_DATA_DIR;
    const failure = dataDirFailure(DEFAULT_DATA_DIR, errno('EACCES', '/data'));
    expect(failure).toBeInstanceOf(DataDirUnwritableError);
    expect((failure as Error).message).toBe(
      'the data directory /data/.cairn (the default, CAIRN_DATA_DIR unset) cannot be written: permission denied (at /data); choose one you can write with --data-dir ./.cairn or CAIRN_DATA_DIR=./.cairn',
    );
  });

  it('names the setting and the cause: a read-only file system, through the variable', () => {
    process.env.CAIRN_DATA_DIR = '/mnt/ro/cairn';
    expect((dataDirFailure('/mnt/ro/cairn', errno('EROFS', '/mnt/ro/cairn')) as Error).message).toBe(
      'the data directory /mnt/ro/cairn (CAIRN_DATA_DIR) cannot be written: read-only file system; set CAIRN_DATA_DIR to one you can write, e.g. CAIRN_DATA_DIR=./.cairn',
    );
  });

  it('names the live holder of the lock, and its host when it is another', () => {
    delete process.env.CAIRN_DATA_DIR;
    const here = dataDirFailure('/srv/cairn', new DirectoryLockedError('data directory /srv/cairn is in use by process 42', { pid: 42, host: hostname() }));
    expect(here).toBeInstanceOf(DirectoryLockedError);
    expect((here as DirectoryLockedError).holder).toEqual({ pid: 42, host: hostname() });
    expect((here as Error).message).toBe('the data directory /srv/cairn (--data-dir) is in use by process 42; stop that server or choose another --data-dir');
    const there = dataDirFailure(DEFAULT_DATA_DIR, new DirectoryLockedError('locked', { pid: 1, host: 'box-2' }));
    expect((there as Error).message).toBe(
      'the data directory /data/.cairn (the default, CAIRN_DATA_DIR unset) is in use by process 1 on host box-2; stop that server or choose another with --data-dir or CAIRN_DATA_DIR',
    );
  });

  it("says cairn mcp's own default, not a flag nobody typed, when CAIRN_DATA_DIR is unset", () => {
    delete process.env.CAIRN_DATA_DIR;
    const own = userDataDir(process.env);
    expect((dataDirFailure(own, errno('EACCES', own)) as Error).message).toBe(
      `the data directory ${own} (cairn mcp's default, CAIRN_DATA_DIR unset) cannot be written: permission denied; choose one you can write with --data-dir ./.cairn or CAIRN_DATA_DIR=./.cairn`,
    );
    // Given as a flag, any other directory is the flag's.
    expect((dataDirFailure('/srv/elsewhere', errno('EACCES', '/srv/elsewhere')) as Error).message).toContain('(--data-dir)');
  });

  it('answers any other failure as it is', () => {
    const other = errno('ENOSPC', '/srv/cairn');
    expect(dataDirFailure('/srv/cairn', other)).toBe(other);
    const self = new DirectoryLockedError('data directory /srv/cairn is in use by this process (pid 7)');
    expect(dataDirFailure('/srv/cairn', self)).toBe(self);
  });
});
