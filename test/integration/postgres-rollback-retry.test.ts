import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { retryingRollbacks } from '../../packages/server/src/store/postgres/db-errors.ts';
import { type TestPostgres, startPostgres } from '../helpers/postgres.ts';

/**
 * A forget and a batch lock many rows, each in its own order, so PostgreSQL may roll one back
 * to break a deadlock; the store runs such transactions again rather than answer 503. Here a
 * real deadlock: B locks row 2 then waits for row 1, which A holds while it waits for row 2.
 * B started waiting first, so its deadlock check fires first and B is the one rolled back.
 */
let pg: TestPostgres;
let sql: postgres.Sql;
beforeAll(async () => {
  pg = await startPostgres();
  sql = postgres(pg.dsn, { max: 4, onnotice: () => {} });
  await sql`create table rows_to_lock (id int primary key, n int not null default 0)`;
  await sql`insert into rows_to_lock (id) values (1), (2)`;
});
afterAll(async () => {
  await sql?.end();
  await pg?.stop();
});

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('retryingRollbacks', () => {
  it('runs a transaction the server rolled back to break a deadlock again, and it commits', async () => {
    let attempts = 0;
    let aHolds: () => void = () => {};
    const aHolding = new Promise<void>((resolve) => (aHolds = resolve));
    const b = retryingRollbacks(() =>
      sql.begin(async (tx) => {
        attempts += 1;
        await tx`update rows_to_lock set n = n + 1 where id = 2`;
        await aHolding;
        await tx`update rows_to_lock set n = n + 1 where id = 1`;
      }),
    );
    const a = sql.begin(async (tx) => {
      await tx`update rows_to_lock set n = n + 1 where id = 1`;
      aHolds();
      // B is now waiting for row 1; A then waits for row 2: a cycle.
      await pause(200);
      await tx`update rows_to_lock set n = n + 1 where id = 2`;
    });
    await Promise.all([a, b]);
    expect(attempts).toBeGreaterThan(1);
    expect(await sql`select id, n from rows_to_lock order by id`).toEqual([{ id: 1, n: 2 }, { id: 2, n: 2 }]);
  });

  it('gives up on other errors at once', async () => {
    let attempts = 0;
    await expect(retryingRollbacks(async () => {
      attempts += 1;
      await sql`select * from no_such_table`;
    })).rejects.toThrow(/no_such_table/);
    expect(attempts).toBe(1);
  });
});
