import type { Logger } from 'pino';
import { type Sql, createClient } from '../../packages/server/src/store/postgres/client.ts';
import { openPostgresStore, type PostgresStore } from '../../packages/server/src/store/postgres/index.ts';
import { startPostgres, type TestPostgres } from './postgres.ts';

/** A throwaway cluster, a store on it, and a small client of its own to read the tables the store writes. */
export interface StoreOnPostgres {
  pg: TestPostgres;
  store: PostgresStore;
  sql: Sql;
  /** Ends the client and the store, then stops and deletes the cluster. */
  close(): Promise<void>;
}

export const startStoreOnPostgres = async (logger: Logger): Promise<StoreOnPostgres> => {
  const pg = await startPostgres();
  const store = await openPostgresStore({ dsn: pg.dsn, logger });
  const sql = createClient({ dsn: pg.dsn, logger, max: 2, connectTimeoutS: 3, statementTimeoutMs: 10_000 });
  return {
    pg,
    store,
    sql,
    close: async () => {
      await sql.end({ timeout: 0 });
      await store.close();
      await pg.stop();
    },
  };
};
