import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANALYSIS_VERSION } from '../../packages/server/src/search-rules/analyzer.ts';
import { postgresBackend } from '../helpers/backend-env.ts';
import { type Cairn, startCairn } from '../helpers/cairn.ts';

/**
 * Each search row on PostgreSQL names the text analysis that made its terms (ANALYSIS_VERSION).
 * A release that changes the analysis finds the rows of an older one in its sweep at start and
 * analyses them again, keeping their vectors (their content did not change, and a remote
 * embedder would be asked for every row again); rows of its own analysis are left alone.
 */
const backend = postgresBackend('search_analysis');
let env: Record<string, string>;
let sql: postgres.Sql;

beforeAll(async () => {
  env = await backend.env();
  sql = postgres(env.CAIRN_DB_DSN as string, { max: 1, onnotice: () => {} });
});
afterAll(async () => {
  await sql?.end();
  await backend.cleanup();
});

interface Row {
  analysis: number;
  terms: string;
  embedder: string | null;
  embedding: string | null;
  xmin: string;
}
const row = async (key: string): Promise<Row | undefined> =>
  (await sql<Row[]>`select analysis, terms::text as terms, embedder, embedding::text as embedding, xmin::text as xmin
                      from cairn_search where entity_path = 'ops/rollouts' and key = ${key}`)[0];

describe('search rows of an older analysis', () => {
  it('are analysed again at start, keeping their vectors, and found by what the new analysis finds', async () => {
    let cairn: Cairn = await startCairn(env);
    const write = async (key: string, value: unknown) =>
      expect((await cairn.call('POST', '/api/v1/entries', { entity_path: 'ops/rollouts', key, value })).status).toBe(201);
    await write('dated', { summary: 'rollout of the ledger', finished_at: '2026-11-20T10:05:00Z' });
    await write('current', 'rollout notes without a date');
    await expect.poll(async () => [(await row('dated'))?.embedder, (await row('current'))?.embedder], { timeout: 15_000 }).toEqual([expect.any(String), expect.any(String)]);
    await cairn.close();

    // The row as the first analysis made it: the day joined to the hour, no month by name. Its
    // vector is swapped for the other row's, which embedding the row again could not give back
    // (the built-in embedder would make the very vector it had).
    await sql`update cairn_search set analysis = 1, terms = to_tsvector('simple', 'ops rollouts dated rollout ledger 2026 11 20t10 05 00 00z'),
               embedding = (select embedding from cairn_search where entity_path = 'ops/rollouts' and key = 'current')
               where entity_path = 'ops/rollouts' and key = 'dated'`;
    const old = (await row('dated')) as Row;
    const current = (await row('current')) as Row;
    expect(old.analysis).toBe(1);
    expect(old.embedding).toEqual(current.embedding);

    cairn = await startCairn(env);
    try {
      await expect.poll(async () => (await row('dated'))?.analysis, { timeout: 15_000 }).toBe(ANALYSIS_VERSION);
      const fresh = (await row('dated')) as Row;
      expect(fresh.terms).toContain("'novemb'");
      expect(fresh.terms).toContain("'20'");
      expect(fresh.terms).not.toContain('20t10');
      expect({ embedder: fresh.embedder, embedding: fresh.embedding }).toEqual({ embedder: old.embedder, embedding: old.embedding });
      // A row of this analysis was not written again.
      expect(await row('current')).toEqual(current);
      const found = await cairn.call('POST', '/api/v1/search', { query: 'rollout 20 November', mode: 'text', entity_path: 'ops/rollouts' });
      expect(found.body.results.map((r: { entry: { key: string } }) => r.entry.key)).toEqual(['dated', 'current']);
    } finally {
      await cairn.close();
    }
  });
});
