import { pino } from 'pino';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Embedder } from '../../packages/server/src/ports/embedder.ts';
import { ANALYSIS_VERSION } from '../../packages/server/src/search-rules/analyzer.ts';
import { parseQuery } from '../../packages/server/src/search-rules/query.ts';
import { openPostgresStore } from '../../packages/server/src/store/postgres/index.ts';
import type { PostgresStore } from '../../packages/server/src/store/postgres/postgres-store.ts';
import { openPostgresSearch } from '../../packages/server/src/store/postgres/search-index.ts';
import { type TestPostgres, startPostgres } from '../helpers/postgres.ts';

const embedder: Embedder = { id: 'flat-4', dimension: 4, local: true, embed: async (texts) => texts.map(() => Float32Array.from([1, 0, 0, 0])) };
const logger = pino({ level: 'silent' });
/** Above the 20,000 rows below which start-up waits for the read (WAIT_BELOW_ROWS, search-stats.ts). */
const LARGE = 30_000;

let pg: TestPostgres;
let store: PostgresStore;
let admin: postgres.Sql;

/** `count` search rows of `namespace` as the indexer writes them (a word all hold, one of a hundred, one each). */
const fill = async (namespace: string, count: number): Promise<void> => {
  await admin`
    insert into cairn_search (namespace, entity_path, key, version, agent_id, confidence, written_at, terms, doc_length, analysis)
    select ${namespace}, 'bulk', 'k' || i, 1, 'tester', 1, now(),
           to_tsvector('simple', 'zqcommon zqgroup' || (i % 100) || ' zqown' || i), 3, ${ANALYSIS_VERSION}
      from generate_series(1, ${count}::int) i`;
};

beforeAll(async () => {
  pg = await startPostgres();
  store = await openPostgresStore({ dsn: pg.dsn, logger });
  admin = postgres(pg.dsn, { max: 1, onnotice: () => {} });
}, 30_000);
afterAll(async () => {
  await admin?.end();
  await store?.close();
  await pg?.stop();
});

/**
 * The BM25 statistics are read with ts_stat over every search row (~34 µs a row: a million rows
 * take ~30 s). Start-up waits for that read only while it is cheap, so that scores compared
 * across a restart stay the same on a small store, and a large store's server listens at once.
 */
describe('PostgreSQL search statistics at start-up', () => {
  it('reads a small table\u2019s statistics before it answers, and leaves a large one\u2019s to the background', async () => {
    await fill('small', 50);
    const first = await openPostgresSearch(pg.dsn, store, embedder, logger);
    try {
      // Read before start-up ended: the first search scores with them.
      expect(first.stats.of('small').docCount).toBe(50);
      expect(first.stats.of('small').docFrequency('zqcommon')).toBe(50);
    } finally {
      await first.close();
    }

    await fill('big', LARGE);
    const index = await openPostgresSearch(pg.dsn, store, embedder, logger);
    try {
      // Started without the terms of the large table: its statistics are still being read.
      expect(index.stats.lists('zqcommon')).toBe(false);
      expect(index.stats.of('big').docCount).toBe(0);
      // A search meanwhile answers (every word counts as rare until the statistics land).
      const filter = { namespace: 'small', now: Date.now() };
      await expect(index.textCandidates(parseQuery('zqown7'), filter, 5)).resolves.toBeDefined();
      // Then the statistics land, for every namespace.
      await expect.poll(() => index.stats.of('big').docFrequency('zqcommon'), { timeout: 60_000, interval: 100 }).toBe(LARGE);
      expect(index.stats.of('small').docFrequency('zqcommon')).toBe(50);
      expect(index.stats.docCount).toBe(LARGE + 50);
    } finally {
      await index.close();
    }
  }, 120_000);
});
