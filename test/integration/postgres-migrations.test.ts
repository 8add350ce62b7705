import { readdir, readFile } from 'node:fs/promises';
import postgres from 'postgres';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresStore } from '../../packages/server/src/store/postgres/index.ts';
import { makeEntry } from '../contract/store-contract.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';

/** A pino logger that keeps each line, so a test can read what the store said at start. */
const capturingLogger = () => {
  const lines: { level: number; msg: string }[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { logger, messages: () => lines.map((l) => l.msg) };
};

describe('postgres store: schema and migrations', () => {
  let pg: TestPostgres;
  let admin: postgres.Sql;
  const silent = pino({ level: 'silent' });

  /** A fresh, empty database on the test cluster, owned by `owner`. */
  const freshDatabase = async (name: string, owner = 'postgres'): Promise<string> => {
    await admin.unsafe(`create database ${name} owner ${owner}`);
    return pg.dsn.replace(/\/cairn$/, `/${name}`).replace('postgres@', `${owner}@`);
  };

  beforeAll(async () => {
    pg = await startPostgres();
    admin = postgres(pg.dsn, { max: 1, onnotice: () => {} });
  });
  afterAll(async () => {
    await admin?.end();
    await pg?.stop();
  });

  it('applies each migration once when several servers start together', async () => {
    const dsn = await freshDatabase('racing');
    const stores = await Promise.all(Array.from({ length: 4 }, () => openPostgresStore({ dsn, logger: silent })));
    const db = postgres(dsn, { max: 1, onnotice: () => {} });
    try {
      const rows = await db<{ name: string }[]>`select name from cairn_migrations order by name`;
      const dir = new URL('../../packages/server/src/store/postgres/migrations/', import.meta.url);
      const files = (await readdir(dir)).filter((f) => f.endsWith('.sql')).sort();
      // Without pgvector the migrations that need it wait, unrecorded, for a later start.
      const needsVector = async (f: string) => (await readFile(new URL(f, dir), 'utf8')).includes('-- requires: vector');
      const expected = [];
      for (const f of files) if (stores[0]!.vectors || !(await needsVector(f))) expected.push(f);
      expect(rows.map((r) => r.name)).toEqual(expected);
      // Every instance works on the one schema.
      const e = makeEntry({ namespace: 'racing' });
      await stores[0]!.append(e, 0);
      expect(await stores[3]!.head(e)).toEqual(e);
    } finally {
      await db.end();
      await Promise.all(stores.map((s) => s.close()));
    }
    // A later start finds nothing to do.
    const { logger, messages } = capturingLogger();
    const again = await openPostgresStore({ dsn, logger });
    await again.close();
    expect(messages()).not.toContain('database schema migrated');
  });

  it('runs without pgvector when the extension cannot be created, and adds it once it exists', async () => {
    // pgvector is not a trusted extension: a role that is not a superuser cannot create it,
    // which stands in for a server where it is not installed at all.
    await admin.unsafe(`create role cairn_app login`);
    const dsn = await freshDatabase('novector', 'cairn_app');
    const { logger, messages } = capturingLogger();
    const store = await openPostgresStore({ dsn, logger });
    try {
      expect(store.vectors).toBe(false);
      expect(messages().some((m) => m.startsWith('vector search disabled'))).toBe(true);
      const e = makeEntry({ namespace: 'novector' });
      await store.append(e, 0);
      expect(await store.head(e)).toEqual(e);
      await expect(store.prepareEmbeddings(384)).rejects.toThrow(/pgvector/);
    } finally {
      await store.close();
    }

    const [available] = await admin<{ n: number }[]>`select count(*)::int as n from pg_available_extensions where name = 'vector'`;
    if (available?.n !== 1) return; // scripts/setup.sh installs pgvector; without it the rest cannot run
    const superuser = postgres(dsn.replace('cairn_app@', 'postgres@'), { max: 1, onnotice: () => {} });
    await superuser`create extension vector`;
    await superuser.end();
    const upgraded = await openPostgresStore({ dsn, logger: silent });
    try {
      expect(upgraded.vectors).toBe(true);
      await upgraded.prepareEmbeddings(8);
      await upgraded.prepareEmbeddings(8); // idempotent
      await expect(upgraded.prepareEmbeddings(16)).rejects.toThrow(/8 dimensions/);
    } finally {
      await upgraded.close();
    }
    const db = postgres(dsn, { max: 1, onnotice: () => {} });
    try {
      const [col] = await db`select count(*)::int as n from information_schema.columns
                              where table_name = 'cairn_versions' and column_name = 'embedding'`;
      expect(col?.n).toBe(1);
      const [idx] = await db`select count(*)::int as n from pg_indexes where indexname = 'cairn_versions_embedding_hnsw'`;
      expect(idx?.n).toBe(1);
    } finally {
      await db.end();
    }
  });

  it('indexes entity path, key, value text and tags for full-text search', async () => {
    const dsn = await freshDatabase('fulltext');
    const store = await openPostgresStore({ dsn, logger: silent });
    const db = postgres(dsn, { max: 1, onnotice: () => {} });
    try {
      await store.append(makeEntry({ namespace: 'ft', entity_path: 'incidents/pagerduty/checkout', key: 'incident-7',
        value: { title: 'Retry storms in the payment gateway' }, tags: ['sev1'] }), 0);
      await store.append(makeEntry({ namespace: 'ft', key: 'note', value: 'deploys were failing' }), 0);
      const match = async (query: string) =>
        (await db<{ key: string }[]>`select key from cairn_versions
           where namespace = 'ft' and search @@ websearch_to_tsquery('english', ${query}) order by key`).map((r) => r.key);
      expect(await match('storm')).toEqual(['incident-7']); // stemmed
      expect(await match('checkout')).toEqual(['incident-7']); // a path segment
      expect(await match('sev1')).toEqual(['incident-7']); // a tag
      expect(await match('deploy')).toEqual(['note']); // a string value
    } finally {
      await db.end();
      await store.close();
    }
  });
});
