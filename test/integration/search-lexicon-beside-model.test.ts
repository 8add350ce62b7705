import { afterAll, describe, expect, it } from 'vitest';
import { type BackendEnv, filesystemBackend, postgresBackend, s3Backend } from '../helpers/backend-env.ts';
import { type Cairn, startCairn } from '../helpers/cairn.ts';
import { startFakeEmbeddings } from '../helpers/fake-embeddings.ts';

// A sentence model configured (here an endpoint whose vectors know words only by hash, so
// it relates no two different words) keeps the built-in lexicon beside it: a word found
// only through WordNet still finds its entry by text, and hybrid search ranks the
// candidates word by word too. CAIRN_SEARCH_LEXICON=off leaves the model alone.

/** Fillers, so that the related word is rare enough to be worth expanding to (under a tenth of the entries). */
const FILLERS = [
  'the nightly backup finished in forty minutes', 'rotate the signing keys every quarter', 'the queue drained after the consumer restart',
  'disk usage on the replica reached eighty percent', 'the release train leaves on tuesdays', 'pager rotation moves to the platform team',
  'the canary stayed healthy for an hour', 'cache hit ratio fell after the schema change', 'latency alerts fire above two hundred milliseconds',
  'the invoice export runs at midnight', 'feature flags are cleaned up monthly', 'the load balancer drains connections before a deploy',
];
const ANSWER = { entity_path: 'people/sam', key: 'weekend', value: 'Sam visited her grandmother at the lake house' };

const writeAll = async (cairn: Cairn): Promise<void> => {
  for (const [i, text] of FILLERS.entries()) expect((await cairn.call('POST', '/api/v1/entries', { entity_path: `ops/n${i}`, key: 'note', value: text })).status).toBe(201);
  expect((await cairn.call('POST', '/api/v1/entries', ANSWER)).status).toBe(201);
};
const search = async (cairn: Cairn, query: string, mode: string) => {
  const res = await cairn.call('POST', '/api/v1/search', { query, mode, limit: 3 });
  expect(res.status).toBe(200);
  return res.body as { mode: string; results: Array<{ entry: { entity_path: string }; parts: Record<string, unknown> }> };
};

describe.each<[string, (label: string) => BackendEnv]>([
  ['filesystem', filesystemBackend],
  ['PostgreSQL', postgresBackend],
  ['S3', s3Backend],
])('the lexicon beside a sentence model on the %s backend', (_name, backendOf) => {
  const backend = backendOf('lexicon');
  afterAll(() => backend.cleanup());

  it('expands text search by related words and ranks word by word; off, the model is fused alone', { timeout: 60_000 }, async () => {
    const fake = await startFakeEmbeddings();
    const env = { ...(await backend.env()), CAIRN_EMBEDDINGS_URL: fake.url, CAIRN_EMBEDDINGS_MODEL: 'fake-embed' };
    try {
      const cairn = await startCairn(env);
      try {
        await writeAll(cairn);
        // "grandma" is in no entry: WordNet's "grandmother" finds it.
        expect((await search(cairn, 'grandma', 'text')).results.map((r) => r.entry.entity_path)).toEqual([ANSWER.entity_path]);
        // Once vectors are in, hybrid answers with all three rankings.
        await expect.poll(async () => (await search(cairn, 'lake house visit', 'hybrid')).mode, { timeout: 15_000 }).toBe('hybrid');
        const hybrid = await search(cairn, 'lake house visit', 'hybrid');
        expect(hybrid.results[0]?.entry.entity_path).toBe(ANSWER.entity_path);
        expect(hybrid.results[0]?.parts).toHaveProperty('words');
        expect(hybrid.results[0]?.parts).toHaveProperty('vector');
      } finally {
        await cairn.close();
      }

      const alone = await startCairn({ ...env, CAIRN_SEARCH_LEXICON: 'off' });
      try {
        expect((await search(alone, 'grandma', 'text')).results).toEqual([]);
        await expect.poll(async () => (await search(alone, 'lake house visit', 'hybrid')).mode, { timeout: 15_000 }).toBe('hybrid');
        const hybrid = await search(alone, 'lake house visit', 'hybrid');
        expect(hybrid.results[0]?.entry.entity_path).toBe(ANSWER.entity_path);
        expect(hybrid.results[0]?.parts).not.toHaveProperty('words');
      } finally {
        await alone.close();
      }
    } finally {
      await fake.close();
    }
  });
});
