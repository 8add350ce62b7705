import type { Cairn } from '../helpers/cairn.ts';
import type { EvalEntry } from './corpus/index.ts';
import type { Search } from './evaluate.ts';

/** The evaluation's search through the API: the first 10 results as `entity_path/key`. */
export const searchWith =
  (cairn: Cairn): Search =>
  async (query, mode, scope) => {
    const res = await cairn.call('POST', '/api/v1/search', { query, mode, limit: 10, ...(scope ? { entity_path: scope } : {}) });
    if (res.status !== 200) throw new Error(`search ${JSON.stringify(query)}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.results.map((r: { entry: { entity_path: string; key: string } }) => `${r.entry.entity_path}/${r.entry.key}`);
  };

/**
 * Writes the corpus through the API in batches, one after another, and waits until search sees
 * all of it (up to `waitSeconds`: a sentence model run on a CPU may take minutes to embed it). The order is the corpus's on every run and backend: entries that score alike are
 * ranked in the order they were written (the in-process index) or by address (PostgreSQL), and
 * writes racing each other made that order, and so a few ties at the cut, differ from run to run.
 */
export const loadCorpus = async (cairn: Cairn, entries: EvalEntry[], batch = 100, waitSeconds = 30): Promise<void> => {
  for (let i = 0; i < entries.length; i += batch) {
    const res = await cairn.call('POST', '/api/v1/entries/batch', { entries: entries.slice(i, i + batch) });
    if (res.status >= 300) throw new Error(`writing entries ${i}–${i + batch - 1}: ${res.status} ${JSON.stringify(res.body)}`);
  }
  // PostgreSQL indexes from the change feed a moment after each commit; wait for the last
  // writes to be searchable and for every vector to be in.
  const tail = entries.slice(-8);
  for (let attempt = 0; attempt < waitSeconds * 10; attempt++) {
    const metrics = String((await cairn.call('GET', '/metrics')).body);
    const pending = Number(/cairn_search_pending_embeddings (\d+)/.exec(metrics)?.[1] ?? 1);
    const found = await Promise.all(
      tail.map(async (e) => {
        const res = await cairn.call('POST', '/api/v1/search', { query: `"${e.key}"`, mode: 'text', entity_path: e.entity_path, limit: 5 });
        return (res.body?.results ?? []).some((r: { entry: { key: string } }) => r.entry.key === e.key);
      }),
    );
    if (pending === 0 && found.every(Boolean)) return settle(cairn);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`search did not catch up with the corpus within ${waitSeconds} s`);
};

/**
 * On PostgreSQL the gauge counts the vectors still queued, not the batch being embedded and
 * stored right then: read as 0, the last vectors may still be on their way. In a loaded run
 * the first mode searched (hybrid) came out lower there (conversations 0.902 for 0.911) while
 * vector, searched last, did not. The index's own wait covers that batch, and on PostgreSQL
 * reads the text statistics afresh from the rows now all there (a read made while the last
 * batches were being announced may count those entries twice until the next one).
 */
const settle = async (cairn: Cairn): Promise<void> => {
  const index = cairn.server.runtime.search.index as { settled?: () => Promise<void> };
  if (typeof index.settled !== 'function') throw new Error(`the search index (${index.constructor.name}) cannot be waited for`);
  await index.settled();
};

/** After a restart that changed the embedder: waits until every one of `count` entries has its new vector. */
export const waitForVectors = async (cairn: Cairn, count: number): Promise<void> => {
  const gauge = (metrics: string, name: string): number => Number(new RegExp(`${name} (\\d+)`).exec(metrics)?.[1] ?? -1);
  for (let attempt = 0; attempt < 300; attempt++) {
    const metrics = String((await cairn.call('GET', '/metrics')).body);
    if (gauge(metrics, 'cairn_search_index_ready') === 1 && gauge(metrics, 'cairn_search_pending_embeddings') === 0 && gauge(metrics, 'cairn_search_embedded_entries') >= count) return settle(cairn);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the vectors were not all rebuilt within 30 s');
};
