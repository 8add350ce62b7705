import { existsSync } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeDirectory } from '../../packages/server/src/store/fs/make-directory.ts';

describe('making the data directory', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('makes every missing level, readable by its owner alone, and leaves an existing one as it is', async () => {
    const base = await mkdtemp(join(tmpdir(), 'cairn-make-dir-'));
    dirs.push(base);
    const deep = join(base, 'a', 'b', 'c');
    await makeDirectory(deep, 0o700);
    for (const level of [join(base, 'a'), join(base, 'a', 'b'), deep]) expect(((await stat(level)).mode & 0o777).toString(8)).toBe('700');
    await makeDirectory(deep, 0o700);
    await Promise.all([makeDirectory(join(base, 'x', 'y'), 0o700), makeDirectory(join(base, 'x', 'y'), 0o700)]);
    expect((await stat(join(base, 'x', 'y'))).isDirectory()).toBe(true);
  });

  // Node's recursive mkdir never returns there (`cairn serve --data-dir /proc/nope` hung without a word).
  it.runIf(existsSync('/proc/self'))('refuses a directory under /proc at once, naming it', async () => {
    await expect(makeDirectory('/proc/cairn-nope/deeper', 0o700)).rejects.toMatchObject({ code: 'ENOENT', path: '/proc/cairn-nope' });
  }, 5_000);
});
