import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll } from 'vitest';
import pino from 'pino';
import { openPostgresStore } from '../../packages/server/src/store/postgres/index.ts';
import type { Store } from '../../packages/server/src/ports/store.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { describeStoreContract } from './store-contract.ts';

let pg: TestPostgres | undefined;
afterAll(async () => {
  await pg?.stop();
});

describeStoreContract('postgres', async () => {
  pg = await startPostgres();
  const options = { dsn: pg.dsn, logger: pino({ level: 'silent' }) };
  let store: Store = await openPostgresStore(options);
  return {
    get store() {
      return store;
    },
    async reopen() {
      await store.close();
      store = await openPostgresStore(options);
      return store;
    },
    async dump() {
      const pgDump = `${process.env.CAIRN_PG_BIN ?? '/usr/lib/postgresql/15/bin'}/pg_dump`;
      const { stdout } = await promisify(execFile)(pgDump, ['--data-only', pg!.dsn], { maxBuffer: 512 * 1024 * 1024 });
      return stdout;
    },
    async cleanup() {
      await store.close();
    },
  };
});
