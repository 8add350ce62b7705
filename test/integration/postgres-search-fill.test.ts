import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import type { Sql } from '../../packages/server/src/store/postgres/client.ts';
import type { PostgresStore } from '../../packages/server/src/store/postgres/index.ts';
import { fillVectors } from '../../packages/server/src/store/postgres/search-rows.ts';
import { makeEntry } from '../contract/store-contract.ts';
import { type StoreOnPostgres, startStoreOnPostgres } from '../helpers/postgres-store.ts';

// The indexer gives announced versions their vectors with fillVectors: the append wrote each
// row, text and all, so only the vector may change, and only on the row of that very version.
describe('postgres search rows: vectors filled in after the append', () => {
  let cluster: StoreOnPostgres;
  let store: PostgresStore;
  let sql: Sql;
  const logger = pino({ level: 'silent' });
  const namespace = `fill-${Date.now()}`;
  const vector = (x: number) => Float32Array.from([x, 1 - x, 0.5]);
  const at = (key: string, version: number, extra: Partial<Entry> = {}) =>
    makeEntry({ namespace, entity_path: 'svc/fill', key, version, value: `${key} text of version ${version}`, ...extra });
  const row = async (key: string) =>
    (await sql<{ version: number; embedder: string | null; embedding: string | null; terms: string }[]>`
      select version, embedder, embedding::text as embedding, terms::text as terms from cairn_search
       where namespace = ${namespace} and entity_path = 'svc/fill' and key = ${key}`)[0];

  beforeAll(async () => {
    cluster = await startStoreOnPostgres(logger);
    ({ store, sql } = cluster);
  });
  afterAll(() => cluster?.close());

  it('fills the vector of the version the row holds, and leaves its text as the append wrote it', async () => {
    const v1 = at('one', 1);
    await store.append(v1, 0);
    const before = await row('one');
    expect(before).toMatchObject({ version: 1, embedder: null, embedding: null });
    await fillVectors(sql, [{ entry: v1, vector: vector(0.25), embedder: 'test:a' }]);
    expect(await row('one')).toEqual({ ...before, embedder: 'test:a', embedding: '[0.25,0.75,0.5]' });
  });

  it('leaves alone a row that holds a newer version, one that has this embedder\'s vector, and an entry that is gone', async () => {
    const old = at('moved', 1);
    await store.append(old, 0);
    await store.append(at('moved', 2), 1);
    const done = at('done', 1);
    await store.append(done, 0);
    await fillVectors(sql, [{ entry: done, vector: vector(0.5), embedder: 'test:a' }]);
    const deleted = at('deleted', 1);
    await store.append(deleted, 0);
    await store.append(at('deleted', 2, { deleted: true }), 1);

    await fillVectors(sql, [
      { entry: old, vector: vector(0.1), embedder: 'test:a' },
      { entry: done, vector: vector(0.9), embedder: 'test:a' },
      { entry: deleted, vector: vector(0.1), embedder: 'test:a' },
    ]);
    // The newer version keeps waiting for its own vector.
    expect(await row('moved')).toMatchObject({ version: 2, embedder: null, embedding: null });
    expect(await row('done')).toMatchObject({ version: 1, embedder: 'test:a', embedding: '[0.5,0.5,0.5]' });
    // The tombstone's append removed the row; a late fill does not bring it back.
    expect(await row('deleted')).toBeUndefined();
  });

  it('replaces the vector of another embedder (a change of embedder re-embeds every row)', async () => {
    const e = at('changed', 1);
    await store.append(e, 0);
    await fillVectors(sql, [{ entry: e, vector: vector(0.5), embedder: 'test:old' }]);
    await fillVectors(sql, [{ entry: e, vector: vector(0.75), embedder: 'test:new' }]);
    expect(await row('changed')).toMatchObject({ embedder: 'test:new', embedding: '[0.75,0.25,0.5]' });
  });
});
