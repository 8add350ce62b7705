import pino from 'pino';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import { ServiceError } from '../../packages/server/src/domain/errors.ts';
import { DamagedRowError, SchemaMismatchError } from '../../packages/server/src/store/postgres/damaged-row.ts';
import { openPostgresStore, type PostgresStore } from '../../packages/server/src/store/postgres/index.ts';
import { makeEntry } from '../contract/store-contract.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';

/**
 * Tables that do not hold what the store wrote (a row deleted or edited by hand, a restore in
 * part) and schemas this release did not make: refused with a message naming what is wrong,
 * never served as something else, skipped silently, or answered "unavailable; retry shortly".
 */
describe('postgres store: damaged rows and schemas it did not make', () => {
  let pg: TestPostgres;
  let admin: postgres.Sql;
  const silent = pino({ level: 'silent' });
  const open: { store: PostgresStore; db: postgres.Sql }[] = [];

  /** A store on a fresh database of the test cluster, and a client of its own on it. */
  const freshStore = async (name: string): Promise<{ store: PostgresStore; db: postgres.Sql; dsn: string }> => {
    await admin.unsafe(`create database ${name}`);
    const dsn = pg.dsn.replace(/\/cairn$/, `/${name}`);
    const store = await openPostgresStore({ dsn, logger: silent });
    const db = postgres(dsn, { max: 1, onnotice: () => {} });
    open.push({ store, db });
    return { store, db, dsn };
  };

  beforeAll(async () => {
    pg = await startPostgres();
    admin = postgres(pg.dsn, { max: 1, onnotice: () => {} });
  });
  afterAll(async () => {
    for (const { store, db } of open) {
      await db.end();
      await store.close();
    }
    await admin?.end();
    await pg?.stop();
  });

  const collect = async (heads: AsyncIterable<Entry>): Promise<Entry[]> => {
    const out: Entry[] = [];
    for await (const e of heads) out.push(e);
    return out;
  };

  it('refuses a head whose version row is missing, in scans and lists, rather than cut them short', async () => {
    const { store, db } = await freshStore('headless');
    const first = makeEntry({ namespace: 'ns', entity_path: 'load/p', key: 'k0' });
    await store.append(first, 0);
    // 1,500 entries (more than a scan page), copies of the first under other keys.
    const cols = 'namespace, entity_path, key, version, value, confidence, agent_id, event_type, memory_type, shared, tags, provenance, content_hash, created_at, written_at, expires_at, deleted, evidence, links';
    await db.unsafe(`insert into cairn_versions (${cols})
      select ${cols.replace(/\bkey\b/, `'k' || i`)} from cairn_versions, generate_series(1, 1499) i`);
    await db.unsafe(`insert into cairn_heads (namespace, entity_path, key, version, agent_id, written_at, expires_at, deleted)
      select namespace, entity_path, 'k' || i, version, agent_id, written_at, expires_at, deleted from cairn_heads, generate_series(1, 1499) i`);
    expect(await collect(store.scanHeads())).toHaveLength(1500);

    // Third in key order (k0, k1, k10, k100, …).
    await db`delete from cairn_versions where namespace = 'ns' and key = 'k10'`;
    const damage = /head of entry ns \/ load\/p \/ k10 names version 1, which cairn_versions does not hold/;

    // An export (and retention, and the search index) scans: it fails rather than end at 999.
    const scanned = collect(store.scanHeads());
    await expect(scanned).rejects.toBeInstanceOf(DamagedRowError);
    await expect(scanned).rejects.toThrow(damage);

    // A page holding it is refused as damage, neither short nor taken for the last one.
    const now = Date.now();
    const page = store.list({ namespace: 'ns', limit: 100, now });
    await expect(page).rejects.toBeInstanceOf(DamagedRowError);
    await expect(page).rejects.toThrow(damage);
    // Pages around it are whole and go on.
    const before = await store.list({ namespace: 'ns', limit: 2, now });
    expect(before.entries.map((e) => e.key)).toEqual(['k0', 'k1']);
    expect(before.next).toEqual({ entity_path: 'load/p', key: 'k1' });
    const after = await store.list({ namespace: 'ns', limit: 100, now, after: { entity_path: 'load/p', key: 'k10' } });
    expect(after.entries).toHaveLength(100);
    expect(after.next).not.toBeNull();

  });

  it('refuses a row whose links or evidence are of another shape, naming it, not as an outage', async () => {
    const { store, db } = await freshStore('misshapen');
    const linked = makeEntry({ namespace: 'ns', entity_path: 'a', key: 'linked' });
    const judged = makeEntry({ namespace: 'ns', entity_path: 'a', key: 'judged' });
    await store.append(linked, 0);
    await store.append(judged, 0);
    await db`update cairn_versions set links = '{"entity_path": "b"}'::jsonb where key = 'linked'`;
    await db`update cairn_versions set evidence = '"validated"'::jsonb where key = 'judged'`;

    const read = store.head(linked);
    await expect(read).rejects.toBeInstanceOf(DamagedRowError);
    await expect(read).rejects.toThrow(/entry ns \/ a \/ linked version 1 is damaged: links are \{"entity_path":"b"\}, not a list/);
    await expect(store.list({ namespace: 'ns', limit: 10, now: Date.now() })).rejects.toThrow(/ns \/ a \/ (linked|judged) version 1 is damaged/);
    // Never served as `{}` evidence.
    await expect(store.version(judged, 1)).rejects.toThrow(/entry ns \/ a \/ judged version 1 is damaged: evidence is "validated"/);
    await expect(store.history(judged, { limit: 10 })).rejects.toBeInstanceOf(DamagedRowError);
  });

  it('refuses to start on a database migrated by a newer release, naming the migration, and changes nothing', async () => {
    const { store, db, dsn } = await freshStore('newer');
    await store.close();
    await db`insert into cairn_migrations (name) values ('999_from_the_future.sql')`;
    const opening = openPostgresStore({ dsn, logger: silent });
    await expect(opening).rejects.toBeInstanceOf(SchemaMismatchError);
    await expect(opening).rejects.toThrow(/migrated by a newer release of Cairn: it records migration 999_from_the_future\.sql, which this release \(.+\) does not have; run that newer release/);
  });

  it('says a missing table is a schema without its migrations, at start and after, not an outage to retry', async () => {
    const { store, db, dsn } = await freshStore('tableless');
    await store.append(makeEntry({ namespace: 'ns' }), 0);
    await db`drop table cairn_heads cascade`;
    const listing = store.list({ namespace: 'ns', limit: 10, now: Date.now() });
    await expect(listing).rejects.toBeInstanceOf(SchemaMismatchError);
    await expect(listing).rejects.toThrow(/schema is missing part of what this release needs \(list: relation "cairn_heads" does not exist\): its migrations were not applied/);
    await expect(listing).rejects.not.toBeInstanceOf(ServiceError);

    await db`drop table cairn_forget_log`;
    const opening = openPostgresStore({ dsn, logger: silent });
    await expect(opening).rejects.toBeInstanceOf(SchemaMismatchError);
    await expect(opening).rejects.toThrow(/relation "cairn_forget_log" does not exist\): its migrations were not applied/);
    await expect(opening).rejects.not.toThrow(/retry shortly/);
  });
});
