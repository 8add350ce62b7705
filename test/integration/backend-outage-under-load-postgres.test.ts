import { type TestPostgres, startPostgres } from '../helpers/postgres.ts';
import { describeOutage } from './backend-outage-under-load.ts';

// pg_ctl stop -m fast ends every session cleanly, as a restart or failover of the database
// does; -m immediate kills the server without a shutdown checkpoint, as a crash does.
let pg: TestPostgres | undefined;

describeOutage('postgres', {
  async env() {
    pg = await startPostgres();
    return { CAIRN_DB_DSN: pg.dsn };
  },
  stops: {
    'fast shutdown': () => (pg as TestPostgres).stopServer('fast'),
    crash: () => (pg as TestPostgres).stopServer('immediate'),
  },
  startServer: () => (pg as TestPostgres).startServer(),
  async cleanup() {
    await pg?.stop();
  },
});
