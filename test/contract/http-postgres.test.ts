import postgres from 'postgres';
import { type TestPostgres, startPostgres } from '../helpers/postgres.ts';
import { describeHttpContract } from './http-contract.ts';

// One throwaway cluster; each server the suite starts gets its own empty database.
let pg: TestPostgres;
let databases = 0;

describeHttpContract('postgres', {
  async env() {
    pg ??= await startPostgres();
    const name = `http_contract_${++databases}`;
    const admin = postgres(pg.dsn, { max: 1, onnotice: () => {} });
    await admin.unsafe(`CREATE DATABASE ${name}`);
    await admin.end();
    const dsn = new URL(pg.dsn);
    dsn.pathname = `/${name}`;
    return { CAIRN_DB_DSN: dsn.toString(), CAIRN_SSE_KEEPALIVE_MS: '200' };
  },
  async cleanup() {
    await pg?.stop();
  },
});
