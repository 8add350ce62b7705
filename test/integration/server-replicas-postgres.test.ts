import { type TestPostgres, startPostgres } from '../helpers/postgres.ts';
import { describeReplicas } from './server-replicas.ts';

// Both replicas share one database: reads are current at once, the stream follows NOTIFY.
let pg: TestPostgres | undefined;

describeReplicas('postgres', {
  async env() {
    pg = await startPostgres();
    return { CAIRN_DB_DSN: pg.dsn, CAIRN_SSE_KEEPALIVE_MS: '500' };
  },
  async cleanup() {
    await pg?.stop();
  },
  visibleWithinMs: 0,
  streamWithinMs: 2000,
});
