import type { Entry } from '../domain/entry.ts';
import { ServiceError } from '../domain/errors.ts';
import type { Embedder } from '../ports/embedder.ts';
import type { Candidate, ParsedQuery, SearchFilter, SearchIndex, SearchIndexStatus, TextRanking } from '../ports/search-index.ts';
import type { ListPosition, Store } from '../ports/store.ts';
import { idf, queryCeiling, termScore, worthExpanding } from '../search-rules/bm25.ts';
import { type DocTerms, docTerms, embeddingText } from '../search-rules/entry-text.ts';
import { passesFilter } from '../search-rules/filter.ts';
import { phraseTest } from '../search-rules/phrase-test.ts';
import { TopK } from '../search-rules/top-k.ts';
import { yieldTurns } from '../event-loop.ts';

/** Versions one search as of a past instant may score: beyond, the caller narrows the scope. */
export const AS_OF_MAX_ENTRIES = 100_000;
const PAGE = 1000;
const MAX_PREFIX_TERMS = 64;
/**
 * Versions embedded between two yields to the event loop, and how long analysis may run
 * before one: a search of the past is CPU work linear in its scope, and slicing it keeps other
 * requests (live searches, writes) answered meanwhile, at the cost of this one taking a little
 * longer. Analysis is sliced by time, not count: 128 versions of 64 KiB held the loop 0.45 s.
 */
const SLICE = 128;
const SLICE_MS = 10;

/**
 * A search index over the versions current at a past instant, built for one search. The live
 * indexes hold only newest versions, so a search about the past reads the versions current
 * then (Store.list as of the instant, the same on every backend) and ranks them with the same
 * rules as the live index: BM25F over the same fields and weights (statistics from these
 * versions), phrases and prefixes alike, and cosine similarity of the same embedder's vectors,
 * computed on demand. It costs time linear in the versions in scope (the namespace, or the
 * searched entity paths): every one is analysed, and embedded when vectors are asked for.
 */
export class AsOfIndex implements SearchIndex {
  private readonly docs: Entry[];
  private readonly embedder: Embedder | null;
  private terms: DocTerms[] | null = null;
  private vectors: Float32Array[] | null = null;

  private constructor(docs: Entry[], embedder: Embedder | null) {
    this.docs = docs;
    this.embedder = embedder;
  }

  /** The versions live at `filter.now` (the instant asked about) in the filter's namespace and paths. */
  static async open(store: Store, embedder: Embedder | null, filter: SearchFilter): Promise<AsOfIndex> {
    const docs: Entry[] = [];
    for (const prefix of filter.prefixes ?? [undefined]) {
      let after: ListPosition | undefined;
      do {
        const page = await store.list({ namespace: filter.namespace, limit: PAGE, now: filter.now, asOf: filter.now, ...(prefix === undefined ? {} : { prefix }), ...(after ? { after } : {}) });
        docs.push(...page.entries);
        if (docs.length > AS_OF_MAX_ENTRIES) {
          throw new ServiceError('VALIDATION_FAILED', `a search as of a past instant scores at most ${AS_OF_MAX_ENTRIES} entries; narrow it with entity_path`, {
            details: [{ field: 'entity_path', message: `more than ${AS_OF_MAX_ENTRIES} entries were live then in this scope` }],
          });
        }
        after = page.next ?? undefined;
      } while (after);
    }
    // Overlapping prefixes (a confined key's) must not list an entry twice.
    const unique = new Map(docs.map((d) => [`${d.entity_path}\u0000${d.key}`, d]));
    return new AsOfIndex([...unique.values()], embedder);
  }

  async textCandidates(query: ParsedQuery, filter: SearchFilter, n: number): Promise<TextRanking> {
    const terms = await this.analyse();
    // A scan of every document per term: counted once, for the ceiling and the weights.
    const frequencies = new Map<string, number>();
    const frequencyOf = (term: string): number => {
      let df = frequencies.get(term);
      if (df === undefined) frequencies.set(term, (df = terms.reduce((count, d) => count + (d.tf.has(term) ? 1 : 0), 0)));
      return df;
    };
    const ceiling = queryCeiling(query.terms, frequencyOf, Math.max(1, terms.length));
    const wanted = new Set(query.terms);
    if (query.prefixes.length > 0) {
      const frequency = new Map<string, number>();
      for (const doc of terms) for (const term of doc.tf.keys()) if (query.prefixes.some((group) => group.some((p) => term.startsWith(p)))) frequency.set(term, (frequency.get(term) ?? 0) + 1);
      for (const [term] of [...frequency].sort((a, b) => b[1] - a[1]).slice(0, MAX_PREFIX_TERMS)) wanted.add(term);
    }
    if (wanted.size === 0) return { candidates: [], ceiling };
    const docCount = terms.length;
    const average = docCount > 0 ? terms.reduce((sum, d) => sum + d.length, 0) / docCount : 1;
    const weights = new Map<string, number>();
    for (const term of wanted) {
      const df = frequencyOf(term);
      if (df > 0) weights.set(term, idf(df, docCount));
    }
    // Related words weigh below the words typed, by the live indexes' rules (memory-index.ts).
    for (const { term, weight } of query.expansions ?? []) {
      const df = frequencyOf(term);
      if (!wanted.has(term) && df > 0 && worthExpanding(df, docCount)) weights.set(term, weight * idf(df, docCount));
    }
    const top = new TopK(n);
    const holdsPhrases = query.phrases.length === 0 ? () => true : phraseTest(query.phrases);
    terms.forEach((doc, i) => {
      let score = 0;
      for (const [term, weight] of weights) {
        const tf = doc.tf.get(term);
        if (tf !== undefined) score += termScore(weight, tf, doc.length, average);
      }
      if (score <= 0 || !top.wouldTake(score)) return;
      const entry = this.docs[i] as Entry;
      if (passesFilter(entry, filter) && holdsPhrases(entry)) top.push(i, score);
    });
    return { candidates: top.sorted().map((h) => ({ entry: this.docs[h.slot] as Entry, score: h.score })), ceiling };
  }

  /** The versions holding each term that `filter` lets through, counted up to `cap` (spelling: the words of the past). */
  async termsHeld(terms: readonly string[], filter: SearchFilter, cap: number): Promise<Map<string, number>> {
    const analysed = await this.analyse();
    const held = new Map<string, number>();
    for (const term of terms) {
      let found = 0;
      for (let i = 0; i < analysed.length && found < cap; i++) {
        if (analysed[i]?.tf.has(term) && passesFilter(this.docs[i] as Entry, filter)) found += 1;
      }
      held.set(term, found);
    }
    return held;
  }

  async vectorCandidates(vector: Float32Array, filter: SearchFilter, n: number): Promise<Candidate[]> {
    const vectors = await this.embedAll();
    vector = unit(vector);
    const top = new TopK(n);
    vectors.forEach((v, i) => {
      if (v.length !== vector.length) return;
      let dot = 0;
      for (let d = 0; d < v.length; d++) dot += (v[d] as number) * (vector[d] as number);
      if (top.wouldTake(dot) && passesFilter(this.docs[i] as Entry, filter)) top.push(i, dot);
    });
    return top.sorted().map((h) => ({ entry: this.docs[h.slot] as Entry, score: h.score }));
  }

  status(): SearchIndexStatus {
    return {
      state: 'ready',
      entries: this.docs.length,
      embedder: this.embedder?.id ?? null,
      dimension: this.embedder?.dimension ?? null,
      embedded: this.vectors?.length ?? 0,
      pendingEmbeddings: 0,
      // Embedding every version on demand is for an in-process model; a remote one would be
      // called once per version per search, so searches of the past rank by text there.
      vectors: this.embedder?.local === true,
      saving: false,
    };
  }

  /** Built per request from the store's versions; nothing is kept on disk. */
  async persisted(): Promise<void> {}

  async close(): Promise<void> {}

  /** Terms of every version (BM25F), in slices. */
  private async analyse(): Promise<DocTerms[]> {
    if (this.terms) return this.terms;
    const out: DocTerms[] = [];
    let sliceStart = performance.now();
    for (const doc of this.docs) {
      out.push(docTerms(doc));
      if (performance.now() - sliceStart >= SLICE_MS) {
        await yieldTurns();
        sliceStart = performance.now();
      }
    }
    this.terms = out;
    return out;
  }

  /** Unit vectors of every version, so a dot product is their cosine similarity; in slices. */
  private async embedAll(): Promise<Float32Array[]> {
    if (this.vectors) return this.vectors;
    if (!this.embedder) return [];
    const out: Float32Array[] = [];
    for (let i = 0; i < this.docs.length; i += SLICE) {
      const texts = this.docs.slice(i, i + SLICE).map((d) => embeddingText(d));
      out.push(...(await (this.embedder.embedInBackground?.(texts) ?? this.embedder.embed(texts))).map(unit));
      await yieldTurns();
    }
    this.vectors = out;
    return out;
  }
}

const unit = (v: Float32Array): Float32Array => {
  let norm = 0;
  for (let d = 0; d < v.length; d++) norm += (v[d] as number) ** 2;
  if (norm === 0 || Math.abs(norm - 1) < 1e-6) return v;
  const scaled = new Float32Array(v.length);
  for (let d = 0; d < v.length; d++) scaled[d] = (v[d] as number) / Math.sqrt(norm);
  return scaled;
};
