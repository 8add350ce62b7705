import postgres from 'postgres';
import { type TestPostgres, startPostgres } from '../helpers/postgres.ts';
import { describeClientContract } from './client-contract.ts';

// One throwaway cluster; each server the suite starts gets its own empty database.
let pg: TestPostgres;
let databases = 0;

describeClientContract('postgres', {
  async env() {
    pg ??= await startPostgres();
    const name = `client_contract_${++databases}`;
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
