import { afterAll, describe, expect, it } from 'vitest';
import { type BackendEnv, filesystemBackend, postgresBackend, s3Backend } from '../helpers/backend-env.ts';
import { type Cairn, startCairn } from '../helpers/cairn.ts';

/**
 * A key confined to one namespace learns nothing of another namespace's contents from its
 * searches (README, "Keys, scopes and namespaces"): BM25's statistics (document count,
 * lengths, each word's document frequency), the text ceiling, prefix and related-word
 * expansion and spelling are the namespace's own, on every backend. The same queries answer
 * exactly alike (scores and parts included) before and after another namespace fills up
 * with entries sharing the namespace's words.
 */
const ADMIN = 'admin-key-for-namespace-stats-test';
const pg = postgresBackend('nsstats');
const backends: [string, BackendEnv, Record<string, string>][] = [
  ['filesystem', filesystemBackend('nsstats'), {}],
  ['s3', s3Backend('nsstats'), {}],
  ['postgres', pg, {}],
  ['postgres, in-process index', pg, { CAIRN_SEARCH_INDEX: 'memory' }],
];
afterAll(async () => {
  for (const b of new Set(backends.map(([, backend]) => backend))) await b.cleanup();
});

const OWN: { entity_path: string; key: string; value: unknown; tags?: string[] }[] = [
  { entity_path: 'ops/deploys', key: 'rollback', value: 'The deployment of the checkout service was rolled back after the database migration failed', tags: ['deploy'] },
  { entity_path: 'ops/deploys', key: 'canary', value: 'Canary deployment of checkout reached ten percent of traffic before the rollout paused' },
  { entity_path: 'ops/db', key: 'migration', value: { title: 'Database migration runbook', steps: 'take a snapshot, run the migration, verify the replica lag' } },
  { entity_path: 'ops/db', key: 'replica', value: 'Replica lag on the primary database spiked during the nightly backup window' },
  { entity_path: 'ops/oncall', key: 'pager', value: 'The pager rotation moves to Maya on Monday; escalate database incidents to the platform team' },
  { entity_path: 'ops/oncall', key: 'slo', value: 'The checkout service level objective is 99.9 percent of requests under 300 ms' },
  { entity_path: 'notes', key: 'kubernetes', value: 'The kubernetes cluster upgrade to 1.30 is scheduled; rollout of the ingress controller follows' },
  { entity_path: 'notes', key: 'cache', value: 'Checkout latency improved once the redis cache warmed up after the deployment' },
];

const QUERIES: Record<string, unknown>[] = [
  { query: 'database migration rollback', mode: 'text' },
  { query: 'checkout deployment', mode: 'text' },
  { query: 'roll*', mode: 'text' },
  { query: 'replica lag database', mode: 'hybrid' },
  { query: 'who holds the pager?', mode: 'hybrid' },
  // A misspelling: corrected by the words of this namespace's entries.
  { query: 'deploymnet of checkout', mode: 'hybrid' },
  { query: 'service level objective', mode: 'hybrid' },
  { query: 'physician kubernetes upgrade', mode: 'text' },
  { query: 'slow requests after a cache warm up', mode: 'vector' },
];

/** A search's answer less what moves with the clock alone (recency, and the score it weighs). */
const answerOf = (body: { results: { entry: Record<string, unknown>; score: number; parts: Record<string, unknown>; highlights: unknown }[]; mode: string; corrections?: unknown }) => ({
  mode: body.mode,
  corrections: body.corrections,
  results: body.results.map((r) => ({ entry: `${r.entry.entity_path}/${r.entry.key}@${r.entry.version}`, parts: { ...r.parts, recency: undefined }, highlights: r.highlights })),
});

describe('search statistics are each namespace\u2019s own', () => {
  for (const [name, backend, extra] of backends) {
    it(`answers a confined key alike however another namespace fills up (${name})`, async () => {
      const env = { ...(await backend.env()), ...extra, CAIRN_API_KEYS: ADMIN };
      let cairn: Cairn = await startCairn(env);
      try {
        const as = (key: string) => ({ 'x-cairn-api-key': key });
        const issued = await cairn.call('POST', '/api/v1/admin/keys', { name: 'team-a', scopes: ['read', 'write'], namespace: 'team-a' }, as(ADMIN));
        expect(issued.status, JSON.stringify(issued.body)).toBe(201);
        const key = issued.body.key as string;
        const batch = await cairn.call('POST', '/api/v1/entries/batch', { entries: OWN }, as(key));
        expect(batch.status, JSON.stringify(batch.body)).toBeLessThan(300);
        const run = async (): Promise<unknown[]> => {
          const answers: unknown[] = [];
          for (const q of QUERIES) {
            const res = await cairn.call('POST', '/api/v1/search', { limit: 10, ...q }, as(key));
            expect(res.status, JSON.stringify(res.body)).toBe(200);
            answers.push({ q: q.query, ...answerOf(res.body) });
          }
          return answers;
        };
        // Every vector of the namespace is in (the vector query finds all of its entries).
        const everyVector = async (namespace: string, k: string, count: number) =>
          expect
            .poll(async () => (await cairn.call('POST', '/api/v1/search', { query: 'checkout database', mode: 'vector', limit: 100, namespace }, as(k))).body.results?.length, { timeout: 10_000 })
            .toBeGreaterThanOrEqual(count);
        await everyVector('team-a', key, OWN.length);
        // PostgreSQL reads its statistics at the first search after the writes are counted
        // (search-stats.ts): answers are compared from the second run on.
        await run();
        const before = await run();
        expect((before[0] as { results: unknown[] }).results.length).toBeGreaterThan(0);
        expect((before[5] as { corrections?: unknown }).corrections).toEqual([{ typed: 'deploymnet', searched: 'deployment' }]);

        // Another namespace: many entries holding these words (and the misspelling, and more
        // words starting with "roll"), and a lot of other text, of other lengths.
        const words = ['database', 'migration', 'rollback', 'checkout', 'deployment', 'deploymnet', 'replica', 'pager', 'kubernetes', 'cache', 'physician', 'rollover', 'rolling', 'rollercoaster'];
        for (let from = 0; from < 300; from += 100) {
          const entries = Array.from({ length: 100 }, (_, i) => {
            const n = from + i;
            const value = `${words[n % words.length]} ${words[(n * 7) % words.length]} entry ${n} ${'lorem ipsum dolor sit amet '.repeat(1 + (n % 5))}`;
            return { namespace: 'team-b', entity_path: `bulk/${n % 10}`, key: `b${n}`, value };
          });
          const res = await cairn.call('POST', '/api/v1/entries/batch', { entries }, as(ADMIN));
          expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
        }
        await everyVector('team-b', ADMIN, 100);
        // The other namespace's entries are searchable (and PostgreSQL's statistics read them).
        await expect.poll(async () => (await cairn.call('POST', '/api/v1/search', { query: 'lorem', mode: 'text', namespace: 'team-b', limit: 100 }, as(ADMIN))).body.results?.length, { timeout: 10_000 }).toBe(100);

        expect(await run()).toEqual(before);
        // Restarted: the saved index, holding both namespaces, is read back with the same figures.
        await cairn.close();
        cairn = await startCairn(env);
        await everyVector('team-a', key, OWN.length);
        expect(await run()).toEqual(before);
      } finally {
        await cairn.close();
      }
    }, 30_000);
  }
});
