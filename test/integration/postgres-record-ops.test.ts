import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sql, createClient } from '../../packages/server/src/store/postgres/client.ts';
import { openPostgresStore } from '../../packages/server/src/store/postgres/index.ts';
import { RecordOps } from '../../packages/server/src/store/postgres/record-ops.ts';
import * as records from '../../packages/server/src/store/postgres/records.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';

// Record operations beyond the statements in flight share one statement (record-ops.ts). With
// one statement in flight, every burst below runs in batches; each operation must still be
// answered as if it had run alone.
describe('postgres store: coalesced record operations', () => {
  let pg: TestPostgres;
  let sql: Sql;
  const logger = pino({ level: 'silent' });
  // Ids that a text[] literal and a JSON document must quote and escape, and ones that differ only by them.
  const ids = ['plain', 'with space', 'comma,inside', '{braces}', 'quote"d', 'back\\slash', 'NULL', 'null', 'ünïcödé 🪨', 'a', 'A', 'a '];

  beforeAll(async () => {
    pg = await startPostgres();
    // Opening the store once creates its tables.
    await (await openPostgresStore({ dsn: pg.dsn, logger })).close();
    sql = createClient({ dsn: pg.dsn, logger, max: 2, connectTimeoutS: 3, statementTimeoutMs: 10_000 });
  });
  afterAll(async () => {
    await sql?.end({ timeout: 0 });
    await pg?.stop();
  });

  it('creates, reads and deletes every record of a burst as its own operation, awkward ids included', async () => {
    const ops = new RecordOps(sql, 1);
    const c = `burst/${Date.now()}`;
    await records.createRecord(sql, c, 'plain', { before: true });
    const creates = await Promise.all(ids.flatMap((id) => [0, 1].map(async (copy) => ({ id, copy, created: await ops.create(c, id, { id, copy }) }))));
    for (const id of ids) {
      const winners = creates.filter((r) => r.id === id && r.created);
      expect(winners, id).toHaveLength(id === 'plain' ? 0 : 1);
      expect((await records.getRecord(sql, c, id))?.data, id).toEqual(id === 'plain' ? { before: true } : { id, copy: winners[0]?.copy });
    }
    const read = await Promise.all([...ids, 'never'].map((id) => ops.get(c, id)));
    expect(read.map((r) => r?.id ?? null)).toEqual([...ids, null]);
    expect(read.map((r) => r?.data ?? null)).toEqual(await Promise.all([...ids, 'never'].map(async (id) => (await records.getRecord(sql, c, id))?.data ?? null)));
    const deletes = await Promise.all([...ids, ...ids, 'never'].map((id) => ops.delete(c, id)));
    // One delete of each record removed it; its repeat and the delete of a missing one did not.
    expect(deletes).toEqual([...ids.map(() => true), ...ids.map(() => false), false]);
    expect(await records.listRecords(sql, c, { limit: 100 })).toEqual([]);
  });

  it('fails only the operation whose record the database refuses, not the others sharing its statement', async () => {
    const ops = new RecordOps(sql, 1);
    const c = `refused/${Date.now()}`;
    // PostgreSQL's jsonb cannot hold U+0000: the shared statement fails, and each is then run alone.
    const outcomes = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => ops.create(c, `r${i}`, i === 5 ? { text: 'nul\u0000' } : { i })));
    expect(outcomes.map((o) => o.status)).toEqual(Array.from({ length: 12 }, (_, i) => (i === 5 ? 'rejected' : 'fulfilled')));
    expect((await records.listRecords(sql, c, { limit: 100 })).map((r) => r.id).sort()).toEqual(Array.from({ length: 12 }, (_, i) => `r${i}`).filter((id) => id !== 'r5').sort());
  });
});
