import postgres from 'postgres';
import { startPostgres } from '../test/helpers/postgres.ts';
import { VALUE } from './entry-value.ts';
import { type CairnLoad, benchCairn, ratio } from './http-entries.ts';
import { type InsertRate, rawInsertRate } from './lib/raw-inserts.ts';
import { startCairn } from './lib/processes.ts';

export interface PostgresBench extends CairnLoad {
  /** The same database server taking single-row INSERTs from 50 clients: the ceiling for writes. */
  raw_insert: InsertRate;
  write_ratio: number;
}

/** A second database on the cluster, so the ceiling's table does not sit among Cairn's. */
const createDatabase = async (dsn: string, name: string): Promise<string> => {
  const admin = postgres(dsn, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(dsn);
  url.pathname = `/${name}`;
  return url.toString();
};

/** A checkpoint before each measured phase, so none pays for the previous one's dirty pages. */
const checkpoint = async (dsn: string): Promise<void> => {
  const sql = postgres(dsn, { max: 1, onnotice: () => {} });
  try {
    await sql`checkpoint`;
  } finally {
    await sql.end();
  }
};

/**
 * Cairn on PostgreSQL: the write and read loads of the filesystem benchmark (wrk, 50
 * connections, 1 KiB values), and the raw INSERT rate of the same server and driver in the
 * same run. Starts and removes its own throwaway cluster.
 */
export const benchPostgres = async (seconds: number): Promise<PostgresBench> => {
  const pg = await startPostgres();
  try {
    const raw_insert = await rawInsertRate(await createDatabase(pg.dsn, 'bench_raw'), seconds, VALUE);
    await checkpoint(pg.dsn);
    const cairn = await startCairn({ CAIRN_DB_DSN: pg.dsn });
    try {
      const measured = await benchCairn(cairn.url, seconds);
      return { raw_insert, ...measured, write_ratio: ratio(measured.write, raw_insert) };
    } finally {
      await cairn.stop();
    }
  } finally {
    await pg.stop();
  }
};
