import postgres from 'postgres';
import { closedLoopRate } from './closed-loop.ts';

export interface InsertRate {
  rps: number;
  p50_ms: number;
  p99_ms: number;
  inserts: number;
  errors: number;
  clients: number;
}

/**
 * The database's own ceiling for what Cairn does per write: `clients` connections, each
 * doing single-row INSERTs (one statement, one implicit transaction, one commit) of `body`
 * as jsonb into a plain table with a primary key, back to back for `seconds`, with the same
 * driver Cairn uses.
 */
export const rawInsertRate = async (dsn: string, seconds: number, body: string, clients = 50): Promise<InsertRate> => {
  const sql = postgres(dsn, { max: clients, onnotice: () => {} });
  try {
    await sql`drop table if exists bench_raw_inserts`;
    await sql`create table bench_raw_inserts (id bigint generated always as identity primary key, body jsonb not null)`;
    // Open every connection and prepare the statement before the clock starts.
    await Promise.all(Array.from({ length: clients }, () => sql`select 1`));
    await sql`checkpoint`;

    const rate = await closedLoopRate(clients, seconds, () => sql`insert into bench_raw_inserts (body) values (${body}::jsonb)`);
    return { rps: rate.rps, p50_ms: rate.p50_ms, p99_ms: rate.p99_ms, inserts: rate.done, errors: rate.errors, clients };
  } finally {
    await sql.end({ timeout: 5 });
  }
};
