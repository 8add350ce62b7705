import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import pino from 'pino';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresStore } from '../../packages/server/src/store/postgres/index.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';

/**
 * cairn_records was keyed by (collection, id), and a btree entry holds at most 2,704 bytes: an
 * id past about 2.7 KB (entity paths of 512 characters make such ids) was refused for good,
 * and answered "unavailable; retry shortly". Migration 015 keys records by the SHA-256 of the
 * id; a database made by an earlier build migrates in place, its records kept.
 */
describe('postgres records: a database keyed by (collection, id) migrates in place', () => {
  let pg: TestPostgres;
  const silent = pino({ level: 'silent' });
  const hex = (bytes: number, seed: string) =>
    Array.from({ length: Math.ceil(bytes / 64) }, (_, i) => createHash('sha256').update(`${seed}/${i}`).digest('hex')).join('').slice(0, bytes);

  beforeAll(async () => {
    pg = await startPostgres();
  });
  afterAll(async () => {
    await pg?.stop();
  });

  it('keeps every record and its order, and takes ids past a btree entry afterwards', async () => {
    // The schema as the build before 015 left it: migrations 001–014 (those pgvector does not need).
    const dir = new URL('../../packages/server/src/store/postgres/migrations/', import.meta.url);
    const before = (await readdir(dir)).filter((f) => /^\d{3}_.*\.sql$/.test(f) && f < '015').sort();
    const db = postgres(pg.dsn, { max: 1, onnotice: () => {} });
    const old = ['a', 'z', 'ü', '𝒳', 'h'.repeat(300), `${'h'.repeat(300)}a`, 'é'.repeat(150), `p:${hex(2000, 'old')}`, `${'h'.repeat(256)}b`, `${'h'.repeat(256)}a${'x'.repeat(100)}`];
    try {
      await db.begin(async (tx) => {
        await tx`create table cairn_migrations (name text primary key, applied_at timestamptz not null default now())`;
        for (const f of before) {
          const text = await readFile(new URL(f, dir), 'utf8');
          if (text.includes('-- requires: vector')) continue;
          await tx.unsafe(text);
          await tx`insert into cairn_migrations (name) values (${f})`;
        }
      });
      for (const id of old) await db`insert into cairn_records (collection, id, data) values ('c', ${id}, ${db.json({ id })})`;
      // What the old key refused.
      const refused = await db`insert into cairn_records (collection, id, data) values ('c', ${hex(4000, 'x')}, '{}')`.catch((e: { code?: string }) => e.code);
      expect(refused).toBe('54000');
    } finally {
      await db.end();
    }

    const store = await openPostgresStore({ dsn: pg.dsn, logger: silent });
    try {
      const sorted = [...old].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
      for (const id of old) {
        expect((await store.getRecord('c', id))?.data).toEqual({ id });
        expect(await store.createRecord('c', id, { again: true })).toBe(false);
      }
      expect((await store.listRecords('c', { limit: 100 })).map((r) => r.id)).toEqual(sorted);
      for (const bytes of [2800, 4000, 8000, 64_000]) {
        const id = hex(bytes, `new${bytes}`);
        expect(await store.createRecord('c', id, { bytes }), `${bytes} bytes`).toBe(true);
        expect(await store.createRecord('c', id, { bytes: 0 }), `${bytes} bytes`).toBe(false);
        expect((await store.getRecord('c', id))?.data).toEqual({ bytes });
        sorted.push(id);
      }
      sorted.sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
      const paged: string[] = [];
      for (let after: string | undefined; ; ) {
        const page = await store.listRecords('c', { limit: 3, ...(after === undefined ? {} : { after }) });
        if (page.length === 0) break;
        paged.push(...page.map((r) => r.id));
        after = page.at(-1)!.id;
      }
      expect(paged).toEqual(sorted);
      expect(await store.deleteRecord('c', `p:${hex(2000, 'old')}`)).toBe(true);
      expect(await store.getRecord('c', `p:${hex(2000, 'old')}`)).toBeNull();
    } finally {
      await store.close();
    }
  });
});
