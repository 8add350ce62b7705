import { contentHash } from '../../packages/server/src/domain/content-hash.ts';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import { buildCorpus } from '../../test/eval/corpus/index.ts';
import { random } from '../../test/eval/corpus/model.ts';

/** Everyday words, drawn with a Zipf-like skew so postings lengths look like real text. */
const FILLER = ('team update check issue work time review change fix test note plan user data service request error page ' +
  'build release week today call meeting question follow team status code config system report customer access job queue ' +
  'cluster node alert traffic cost budget owner docs link ticket branch merge version schedule window region zone support ' +
  'account billing order payment search email mobile login session cache storage network latency metrics logs trace').split(' ');

/**
 * `count` entries for search benchmarks: the evaluation corpus (incidents, pull requests,
 * deploys, chat threads, tickets, runbooks, decisions, notes) repeated with a copy number in
 * the path and key and a sentence of filler words, so vocabulary and match counts grow with
 * the store as they do in real use. Deterministic.
 */
export function* searchCorpus(count: number): Generator<Entry> {
  const templates = buildCorpus().entries;
  const rand = random(7);
  const now = new Date().toISOString();
  for (let i = 0; i < count; i++) {
    const t = templates[i % templates.length] as (typeof templates)[number];
    const copy = Math.floor(i / templates.length);
    const words: string[] = [];
    for (let w = 0; w < 12; w++) words.push(FILLER[Math.floor(FILLER.length * rand() ** 2)] as string);
    const note = `${words.join(' ')} #${i}`;
    const value = typeof t.value === 'string' ? `${t.value}\n${note}` : { ...t.value, note };
    yield {
      namespace: 'default', entity_path: `${t.entity_path}/c${copy}`, key: t.key, value, version: 1, confidence: t.confidence ?? 1,
      agent_id: t.agent_id ?? 'bench', event_type: t.event_type ?? null, memory_type: t.memory_type ?? 'fact', shared: false, tags: t.tags ?? [],
      provenance: {}, content_hash: contentHash(value), created_at: now, written_at: now, expires_at: null, deleted: false, evidence: { successes: 0, failures: 0, status: 'untested' }, links: [],
    };
  }
}

/** Query bodies for the benchmark: the evaluation's queries, in every mode's mix. */
export const searchQueries = (): string[] => buildCorpus().queries.map((q) => q.query);
