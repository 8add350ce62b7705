import { pino } from 'pino';
import postgres from 'postgres';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Embedder } from '../../packages/server/src/ports/embedder.ts';
import { openPostgresStore } from '../../packages/server/src/store/postgres/index.ts';
import type { PostgresStore } from '../../packages/server/src/store/postgres/postgres-store.ts';
import { type PostgresSearchIndex, openPostgresSearch } from '../../packages/server/src/store/postgres/search-index.ts';
import { makeEntry } from '../contract/store-contract.ts';
import { type TestPostgres, startPostgres } from '../helpers/postgres.ts';

/**
 * `cairn_search_pending_embeddings` on PostgreSQL with a local embedder counts the versions
 * whose vectors are still to come, the batch being embedded included: it read 0 while that
 * batch was embedded and written, so whatever waited for it (an operator's alert, a test
 * waiting for the index) went on with vectors missing.
 */
let release: () => void = () => {};
let calls = 0;
const gate = new Promise<void>((resolve) => (release = resolve));
/** A local model that answers once let: the batch it was handed stays under way until then. */
const embedder: Embedder = {
  id: 'gated-4', dimension: 4, local: true,
  embed: async (texts) => {
    calls += 1;
    await gate;
    return texts.map((_, i) => Float32Array.of(1, i / texts.length, 0, 0));
  },
};

let pg: TestPostgres;
let store: PostgresStore;
let index: PostgresSearchIndex;

beforeAll(async () => {
  pg = await startPostgres();
  const logger = pino({ level: 'silent' });
  store = await openPostgresStore({ dsn: pg.dsn, logger });
  index = await openPostgresSearch(pg.dsn, store, embedder, logger);
}, 30_000);
afterAll(async () => {
  release();
  await index?.close();
  await store?.close();
  await pg?.stop();
});

it('counts the batch being embedded as pending until its vectors are stored', async () => {
  let announced = 0;
  const unsubscribe = store.changes.subscribe(() => void (announced += 1));
  await store.appendBatch(Array.from({ length: 10 }, (_, i) => ({ entry: makeEntry({ entity_path: 'pending', key: `k${i}`, value: `note ${i}` }), expectedHead: 0 })));
  // Every version announced (the indexer hears each with this listener), and its batch handed to the model.
  await expect.poll(() => announced, { timeout: 10_000, interval: 10 }).toBe(10);
  await expect.poll(() => calls, { timeout: 10_000, interval: 10 }).toBeGreaterThan(0);
  unsubscribe();
  expect(index.status().pendingEmbeddings).toBe(10);

  release();
  await expect.poll(() => index.status().pendingEmbeddings, { timeout: 10_000, interval: 5 }).toBe(0);
  // Read as 0: every vector is there.
  const sql = postgres(pg.dsn, { max: 1, onnotice: () => {} });
  try {
    const [row] = await sql`select count(*)::int as rows, count(embedding)::int as embedded from cairn_search where entity_path = 'pending'`;
    expect(row).toEqual({ rows: 10, embedded: 10 });
  } finally {
    await sql.end();
  }
});
