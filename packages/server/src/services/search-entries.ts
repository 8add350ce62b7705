import type { SearchResponse } from 'cairn-memory-client';
import { z } from 'zod';
import { textProblem } from '../domain/value.ts';
import type { Entry } from '../domain/entry.ts';
import { ServiceError } from '../domain/errors.ts';
import { AgentIdSchema, EntityPathSchema, EventTypeSchema, NamespaceSchema } from '../domain/names.ts';
import { parseInput } from '../domain/parse-input.ts';
import type { Candidate, SearchFilter, SearchIndex } from '../ports/search-index.ts';
import { AsOfIndex } from './as-of-index.ts';
import { embeddingText } from '../search-rules/entry-text.ts';
import { type Ranked, SCALE_DEPTH, addressOf, fuse } from '../search-rules/fuse.ts';
import { highlight } from '../search-rules/highlights.ts';
import { expandQuery, hasTextTerms, parseQuery } from '../search-rules/query.ts';
import { withoutFrame } from '../search-rules/question.ts';
import { namespaceFor, pathVisible, requirePath, requireScope } from './authorize.ts';
import { AsOfSchema, asOfInstant } from './as-of.ts';
import type { Context, ServiceDeps } from './context.ts';
import { entryMemo } from '../search-rules/entry-memo.ts';
import { InstantParamSchema } from './schemas.ts';
import { fitInPage } from './page-budget.ts';
import { type Correction, correctSpelling } from '../search-rules/spelling.ts';

export const SearchInput = z
  .object({
    query: z.string().trim().min(1).max(1000).refine((q) => textProblem(q) === null, { error: (issue) => textProblem(issue.input as string) ?? 'invalid' }).describe('What to look for: words (any may match; rarer and more matches rank higher), "an exact phrase", or a prefix*. A question ("When did Maya move?") is matched without the words that frame it.'),
    namespace: NamespaceSchema.optional(),
    entity_path: EntityPathSchema.optional().describe('Only entries at this path or below it, segment by segment.'),
    agent_id: AgentIdSchema.optional(),
    since: InstantParamSchema.optional().describe('Only entries written at or after this time (ISO 8601).'),
    min_confidence: z.number().min(0).max(1).optional(),
    event_type: EventTypeSchema.optional(),
    limit: z.number().int().min(1).max(100).default(10),
    discredited: z
      .enum(['hide', 'include', 'apart'])
      .default('hide')
      .describe('Entries whose recorded outcomes discredit them: hide (default), include them among the results, or apart (answered in tried_and_failed: what was tried and failed).'),
    mode: z
      .enum(['hybrid', 'text', 'vector'])
      .default('hybrid')
      .describe('hybrid (default): text and vector rankings fused, then weighed by recency and confidence; text: full-text only; vector: embeddings only.'),
    as_of: AsOfSchema.optional(),
  })
  .strict();
export type SearchInput = z.input<typeof SearchInput>;

// What a search answers: declared once, in the client.
export type { SearchResponse, SearchResult } from 'cairn-memory-client';

/** Each ranking offers this many candidates per result asked for (fusion needs depth), and at least as many as fusion rescales by. */
const DEPTH = 5;
const MIN_CANDIDATES = SCALE_DEPTH;
/** The most candidates each ranking offers when discredited entries crowd out the results (see searchEntries). */
const MAX_CANDIDATES = 10_000;
/** Weight of the vector ranking in reciprocal rank fusion (search profile v1), relative to text (1). */
const VECTOR_WEIGHT = 1;
const QUERY_EMBED_TIMEOUT_MS = 2_000;
/** Candidates of each ranking that the word-by-word ranking re-reads. */
const WORD_POOL = 30;
/** A correction is the neighbour most entries hold, counted up to this many (spelling.ts). */
const HELD_CAP = 100;

/**
 * Search live entries by text, meaning, or both (SPEC §5). Ranking is the same on every
 * backend: the index proposes candidates, this service fuses them (search-rules/fuse.ts) and
 * highlights why each matched.
 */
export const searchEntries = async (deps: ServiceDeps, ctx: Context, raw: unknown): Promise<SearchResponse> => {
  const input = parseInput(SearchInput, raw);
  requireScope(ctx, 'read');
  if (!deps.search) throw new ServiceError('UNAVAILABLE', 'search is not available on this server', { retryAfter: 5 });
  if (input.entity_path !== undefined) requirePath(ctx, input.entity_path);
  const asOf = asOfInstant(deps, input.as_of);
  const filter: SearchFilter = {
    namespace: namespaceFor(ctx, input.namespace),
    prefixes: input.entity_path !== undefined ? [input.entity_path] : ctx.access?.prefixes ?? undefined,
    agentId: input.agent_id,
    since: input.since === undefined ? undefined : Date.parse(input.since),
    minConfidence: input.min_confidence,
    eventType: input.event_type,
    // As of a past instant, liveness (expiry) is judged then, as everything else is.
    now: asOf ?? deps.now(),
  };
  // The live index holds newest versions only: the past is ranked over its own versions.
  const index = asOf === undefined ? deps.search : await AsOfIndex.open(deps.store, deps.embedder ?? null, filter);
  // Questions lose their frame words for the text terms and the word-by-word ranking; the
  // averaged vector reads the query as typed (there "go", "get" still carry some meaning).
  const questions = deps.config.searchProfile !== 'v1';
  // A misspelt word is searched as the word of the caller's entries it most likely meant.
  const { text: searched, corrections } = questions ? await spellingOf(deps, index, input.query, filter) : { text: input.query, corrections: [] };
  const query = parseQuery(searched, { questions });
  if (input.mode !== 'vector' && deps.embedder?.relatedWords) query.expansions = expandQuery(query, deps.embedder.relatedWords(query.text));
  const wantText = input.mode !== 'vector' && hasTextTerms(query);
  // The query is embedded once, however many rounds of candidates the search reads.
  const queryVector = input.mode !== 'text' ? vectorOf(deps, index, query.text, input.mode === 'vector') : Promise.resolve(null);
  const hidden = (r: Ranked): boolean => input.discredited !== 'include' && r.entry.evidence?.status === 'discredited';

  // Discredited entries are set aside after fusion, so the best candidates may all be
  // discredited (a failed approach tried over and over): the page would come back short, or
  // empty. The rankings are then read deeper, four times as deep each round, until `limit`
  // results are found, the rankings run out, or MAX_CANDIDATES are read. The first round reads
  // what a search always read; scores do not depend on the depth (fuse.ts rescales over its
  // first SCALE_DEPTH candidates, the word-by-word ranking re-reads the first WORD_POOL).
  let depth = Math.max(MIN_CANDIDATES, input.limit * DEPTH);
  let words: Candidate[] | null | undefined;
  for (;;) {
    const textRun = wantText ? index.textCandidates(query, filter, depth) : Promise.resolve({ candidates: [], ceiling: 0 });
    const vectorRun = queryVector.then((v) => (v === null ? null : v === 'none' ? [] : index.vectorCandidates(v, filter, depth)));
    const [{ candidates: text, ceiling: textCeiling }, vector] = await Promise.all([textRun, vectorRun]);
    const mode = vector === null ? 'text' : input.mode;
    if (words === undefined) words = mode === 'hybrid' && vector !== null ? await wordRanking(deps, questions ? withoutFrame(query.text) : query.text, text, vector) : null;
    const ranked = fuse(mode === 'vector' ? null : text, vector, { now: filter.now, limit: Number.MAX_SAFE_INTEGER, vectorWeight: VECTOR_WEIGHT, words, textCeiling, by: deps.config.searchProfile === 'v1' ? 'ranks' : 'scores' });
    // A confined key never sees paths outside its prefixes, whatever the index returned.
    const visible = ranked.filter((r) => pathVisible(ctx, r.entry.entity_path));
    const shown = visible.filter((r) => !hidden(r));
    const exhausted = text.length < depth && (vector === null || vector.length < depth);
    if (shown.length < input.limit && !exhausted && depth < MAX_CANDIDATES) {
      depth = Math.min(MAX_CANDIDATES, depth * 4);
      continue;
    }
    const terms = new Set(query.terms);
    const prefixes = query.prefixes.flat();
    const matches = (term: string): boolean => terms.has(term) || prefixes.some((p) => term.startsWith(p));
    // Highlights cost an analysis of every field: only for the results answered.
    const answer = (page: Ranked[]) => page.map((r) => ({ entry: r.entry, score: round(r.score), parts: r.parts, highlights: highlight(r.entry, matches) }));
    const spelled = corrections.length > 0 ? { corrections } : {};
    // At most LIMITS.pageJsonChars of entries: a page of large entries ends early.
    const results = answer(withinBudget(shown.slice(0, input.limit)));
    if (input.discredited !== 'apart') return { results, mode, ...spelled };
    // What was tried and failed: the discredited entries ranked among the results answered,
    // or among the first 2 × limit candidates, whichever reaches further.
    const last = shown[input.limit - 1];
    const reach = Math.max(input.limit * 2, last === undefined ? visible.length : visible.indexOf(last) + 1);
    const used = fitInPage(results.map((r) => r.entry)).size;
    return { results, mode, ...spelled, tried_and_failed: answer(withinBudget(visible.slice(0, reach).filter((r) => r.entry.evidence?.status === 'discredited').slice(0, input.limit), used)) };
  }
};

/** The first of `ranked` whose entries' JSON fits in what is left of a page's budget. */
const withinBudget = (ranked: Ranked[], used = 0): Ranked[] => ranked.slice(0, fitInPage(ranked.map((r) => r.entry), used, undefined, true).count);

/**
 * The query spelt as the caller most likely meant it (spelling.ts): misspelt words corrected
 * by the embedder's lexicon and the entries `filter` lets the caller search in `index` (the
 * past's versions, for a search as of an instant); as typed where either is missing.
 */
const spellingOf = async (deps: ServiceDeps, index: SearchIndex, query: string, filter: SearchFilter): Promise<{ text: string; corrections: Correction[] }> => {
  const embedder = deps.embedder;
  if (!embedder?.knowsWord) return { text: query, corrections: [] };
  return correctSpelling(query, {
    knowsWord: (word) => embedder.knowsWord?.(word) ?? true,
    held: (terms) => index.termsHeld?.(terms, filter, HELD_CAP) ?? Promise.resolve(new Map()),
    knownHeld: (term) => index.holdsTerm?.(term, filter.namespace) ?? false,
  });
};

/**
 * The query's vector; null when vectors cannot be had (then hybrid answers by text alone),
 * 'none' for a query of no word the embedder knows (only emoji or punctuation), which has no
 * direction: nothing is nearer to it than anything else. PostgreSQL would answer arbitrary
 * rows at a similarity of NaN (null in JSON), which fusion ranked first; the in-process
 * index answered none.
 */
const vectorOf = async (deps: ServiceDeps, index: SearchIndex, text: string, required: boolean): Promise<Float32Array | 'none' | null> => {
  const embedder = deps.embedder;
  const status = index.status();
  if (!embedder || !status?.vectors) {
    if (required) throw new ServiceError('UNAVAILABLE', 'vector search is off on this server (no embedder, or no pgvector)', { retryAfter: 60 });
    return null;
  }
  let vector: Float32Array | undefined;
  try {
    // A slow endpoint must not hold a search: past the deadline, hybrid answers by text.
    const deadline = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('embedding the query timed out')), QUERY_EMBED_TIMEOUT_MS).unref());
    [vector] = await Promise.race([embedder.embed([text]), deadline]);
  } catch (error) {
    if (required) throw new ServiceError('UNAVAILABLE', 'the embedding model cannot be reached', { retryAfter: 5, cause: error });
    return null;
  }
  if (!vector) return null;
  return vector.some((x) => x !== 0) ? vector : 'none';
};

/** Per-word similarity of the best candidates of both rankings, where the embedder offers it. */
const wordRanking = async (deps: ServiceDeps, query: string, text: Candidate[], vector: Candidate[]): Promise<Candidate[] | null> => {
  const matcher = deps.embedder?.wordMatch?.bind(deps.embedder);
  if (!matcher) return null;
  const pool = new Map<string, Candidate>();
  for (const c of [...text.slice(0, WORD_POOL), ...vector.slice(0, WORD_POOL)]) pool.set(addressOf(c.entry), c);
  const candidates = [...pool.values()];
  const scores = await matcher(query, candidates.map((c) => textOf(c.entry)));
  return candidates.map((c, i) => ({ entry: c.entry, score: scores[i] as number })).sort((a, b) => b.score - a.score);
};

/**
 * An entry's embedding text, the same string from search to search while the entry stays a
 * candidate: building it walks the whole value, and the embedder's per-text cache then finds
 * it without hashing a fresh copy. Entries are immutable (a new version is a new object), and
 * weakly held: a replaced one leaves with its text; the map is started afresh when full, as
 * the embedder's own cache is.
 */
const textOf = entryMemo(embeddingText, (text) => text.length);

const round = (x: number): number => Math.round(x * 1e6) / 1e6;
