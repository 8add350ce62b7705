import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { type FsStore, openFsStore } from '../../packages/server/src/store/fs/index.ts';

/**
 * A filesystem store in a data directory of its own, opened before the suite's tests (or
 * before each, with `perTest`) and closed and deleted after. Read `store()` inside tests.
 */
export const useFsStore = (name: string, options: { perTest?: boolean } = {}): { store: () => FsStore } => {
  let dir: string | undefined;
  let store: FsStore | undefined;
  const open = async (): Promise<void> => {
    dir = await mkdtemp(join(tmpdir(), `cairn-${name}-`));
    store = await openFsStore({ dir, logger: pino({ level: 'silent' }) });
  };
  const close = async (): Promise<void> => {
    await store?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  };
  if (options.perTest) {
    beforeEach(open);
    afterEach(close);
  } else {
    beforeAll(open);
    afterAll(close);
  }
  return {
    store: () => {
      if (!store) throw new Error('the filesystem store is opened before the tests run');
      return store;
    },
  };
};
