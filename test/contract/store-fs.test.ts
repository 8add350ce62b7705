import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { openFsStore } from '../../packages/server/src/store/fs/index.ts';
import type { Store } from '../../packages/server/src/ports/store.ts';
import { describeStoreContract } from './store-contract.ts';

describeStoreContract('filesystem', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'cairn-fs-'));
  const logger = pino({ level: 'silent' });
  let store: Store = await openFsStore({ dir, logger });
  return {
    get store() {
      return store;
    },
    async reopen() {
      await store.close();
      store = await openFsStore({ dir, logger });
      return store;
    },
    async dump() {
      const names = await readdir(dir);
      return (await Promise.all(names.map((name) => readFile(join(dir, name), 'latin1').catch(() => '')))).join('\n');
    },
    async cleanup() {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});
