import { pino } from 'pino';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Embedder } from '../../packages/server/src/ports/embedder.ts';
import { openPostgresStore } from '../../packages/server/src/store/postgres/index.ts';
import type { PostgresStore } from '../../packages/server/src/store/postgres/postgres-store.ts';
import { type PostgresSearchIndex, openPostgresSearch } from '../../packages/server/src/store/postgres/search-index.ts';
import { makeEntry } from '../contract/store-contract.ts';
import { type TestPostgres, startPostgres } from '../helpers/postgres.ts';

/**
 * Vectors by key: `near-<i>` close to the first axis, `far-<i>` at an angle from it that grows
 * with i (so that their order from the first axis is known), each with a little of its own.
 */
const vectorOf = (text: string): Float32Array => {
  const [, kind, n] = /(near|far)-(\d+)/.exec(text) ?? [];
  const i = Number(n ?? 0);
  const v = new Float32Array(8);
  const angle = kind === 'near' ? 0.05 + (i % 997) * 1e-5 : 1.0 + i * 1e-4;
  v[0] = Math.cos(angle);
  v[1] = Math.sin(angle);
  v[2 + (i % 6)] = 0.01 * ((i * 7919) % 13);
  return v;
};
const embedder: Embedder = { id: 'axes-8', dimension: 8, local: true, embed: async (texts) => texts.map(vectorOf) };

let pg: TestPostgres;
let store: PostgresStore;
let index: PostgresSearchIndex;

beforeAll(async () => {
  pg = await startPostgres();
  // The walk gives up after this many rows (pgvector's default is 20,000): lowered, so that a
  // few thousand rows of another namespace show what 20,000 would, in a few seconds.
  const admin = postgres(pg.dsn, { max: 1, onnotice: () => {} });
  await admin.unsafe(`alter database ${(await admin`select current_database() as d`)[0]!.d} set hnsw.max_scan_tuples = 2000`);
  await admin.end();
  const logger = pino({ level: 'silent' });
  store = await openPostgresStore({ dsn: pg.dsn, logger });
  index = await openPostgresSearch(pg.dsn, store, embedder, logger);
}, 30_000);
afterAll(async () => {
  await index?.close();
  await store?.close();
  await pg?.stop();
});

describe('PostgreSQL vector search in a small namespace beside a large one', () => {
  it('answers the small namespace exactly, where the HNSW walk reads the large one\u2019s nearer rows first', async () => {
    // 6k rows of namespace b nearer the query than any of namespace a's 1k: the walk, filtered
    // to a, reads b's rows until it gives up (hnsw.max_scan_tuples) and finds few of a's.
    const batch = (namespace: string, kind: string, from: number, count: number) =>
      store.appendBatch(Array.from({ length: count }, (_, j) => ({ entry: makeEntry({ namespace, entity_path: 'v', key: `${kind}-${from + j}`, value: { n: from + j } }), expectedHead: 0 })));
    await batch('a', 'far', 0, 1_000);
    for (let i = 0; i < 6_000; i += 2_000) await batch('b', 'near', i, 2_000);
    await expect.poll(() => index.status().pendingEmbeddings, { timeout: 60_000, interval: 200 }).toBe(0);
    await index.stats.refresh();
    const query = new Float32Array(8);
    query[0] = 1;
    const hits = await index.vectorCandidates(query, { namespace: 'a', now: Date.now() }, 10);
    // The exact 10 nearest of a, by cosine similarity with the query.
    const cosine = (v: Float32Array) => (v[0] as number) / Math.hypot(...v);
    const exact = Array.from({ length: 1_000 }, (_, i) => `far-${i}`).sort((x, y) => cosine(vectorOf(y)) - cosine(vectorOf(x)) || (x < y ? -1 : 1));
    expect(hits.map((h) => h.entry.key)).toEqual(exact.slice(0, 10));
    // b, larger than the exact scan's bound, still goes through the index.
    expect((await index.vectorCandidates(query, { namespace: 'b', now: Date.now() }, 10)).length).toBe(10);
    // The walk's breadth for a search's first round comes from the search pool's connection
    // settings, with no transaction around the statement (search-nearest.ts): pgvector's
    // defaults (ef_search 40, no iterative scan) would answer 40 of 50. Each row's entry is read
    // in the same statement: its own version, nearest first.
    for (const n of [50, 120]) {
      const walked = await index.vectorCandidates(query, { namespace: 'b', now: Date.now() }, n);
      expect(walked).toHaveLength(n);
      expect(walked.every((h) => h.entry.key === `near-${(h.entry.value as { n: number }).n}` && h.entry.namespace === 'b')).toBe(true);
      expect(walked.map((h) => h.score)).toEqual(walked.map((h) => h.score).sort((x, y) => y - x));
    }
  }, 120_000);
});
