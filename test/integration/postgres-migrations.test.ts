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

  it('upgrades a database written before the versions lost their unused search column', async () => {
    const dsn = await freshDatabase('upgrade');
    const db = postgres(dsn, { max: 1, onnotice: () => {} });
    const store = await (async () => {
      try {
        // The schema as a server before 009 left it, with a version written through it.
        const dir = new URL('../../packages/server/src/store/postgres/migrations/', import.meta.url);
        const older = (await readdir(dir)).filter((f) => f.endsWith('.sql') && f < '009').sort();
        await db`create table cairn_migrations (name text primary key, applied_at timestamptz not null default now())`;
        const vectors = (await db`select count(*)::int as n from pg_available_extensions where name = 'vector'`)[0]?.n === 1;
        if (vectors) await db`create extension if not exists vector`;
        for (const f of older) {
          const text = await readFile(new URL(f, dir), 'utf8');
          if (!vectors && text.includes('-- requires: vector')) continue;
          await db.unsafe(text);
          await db`insert into cairn_migrations (name) values (${f})`;
        }
        const old = makeEntry({ namespace: 'up', key: 'old', value: { title: 'written before the upgrade' } });
        await db`insert into cairn_heads (namespace, entity_path, key, version, agent_id, written_at, expires_at, deleted)
                 values (${old.namespace}, ${old.entity_path}, ${old.key}, 1, ${old.agent_id}, ${old.written_at}, null, false)`;
        await db`insert into cairn_versions (namespace, entity_path, key, version, value, confidence, agent_id, event_type, memory_type,
                   shared, tags, provenance, content_hash, created_at, written_at, expires_at, deleted)
                 values (${old.namespace}, ${old.entity_path}, ${old.key}, 1, ${db.json(old.value as postgres.JSONValue)}, ${old.confidence},
                   ${old.agent_id}, ${old.event_type}, ${old.memory_type}, ${old.shared}, '{}', ${db.json(old.provenance as postgres.JSONValue)},
                   ${old.content_hash}, ${old.created_at}, ${old.written_at}, null, false)`;
        return await openPostgresStore({ dsn, logger: silent });
      } catch (error) {
        await db.end();
        throw error;
      }
    })();
    try {
      const old = await store.head({ namespace: 'up', entity_path: makeEntry().entity_path, key: 'old' });
      expect(old?.value).toEqual({ title: 'written before the upgrade' });
      const next = makeEntry({ namespace: 'up', key: 'old', version: 2, value: 'after' });
      await store.append(next, 1);
      expect(await store.head(next)).toEqual(next);
      const [col] = await db`select count(*)::int as n from information_schema.columns where table_name = 'cairn_versions' and column_name = 'search'`;
      expect(col?.n).toBe(0);
      const [idx] = await db`select count(*)::int as n from pg_indexes where indexname = 'cairn_versions_search'`;
      expect(idx?.n).toBe(0);
    } finally {
      await db.end();
      await store.close();
    }
  });
});
