import type { Logger } from 'pino';
import type { Entry } from '../domain/entry.ts';
import { unavailable } from '../domain/errors.ts';
import type { Embedder } from '../ports/embedder.ts';
import type { Candidate, ParsedQuery, SearchFilter, SearchIndex, SearchIndexStatus } from '../ports/search-index.ts';
import type { Store } from '../ports/store.ts';
import { analyze } from '../search-rules/analyzer.ts';
import { docTerms, embeddingText, entryFields } from '../search-rules/entry-text.ts';
import { passesFilter } from '../search-rules/filter.ts';
import { containsPhrase } from '../search-rules/query.ts';
import { EmbedQueue } from './embed-queue.ts';
import { type SnapshotFile, stampOf } from './index-snapshot.ts';
import { restoreSnapshot, saveSnapshot } from './index-persistence.ts';
import { SlotTable } from './slot-table.ts';
import { TextIndex } from './text-index.ts';
import { VectorIndex } from './vector-index.ts';

/** Searches arriving while the index loads wait this long before answering UNAVAILABLE. */
const LOADING_WAIT_MS = 3_000;
/** While fewer embeddings than this are queued, a vector search waits for them (read-your-writes). */
const WAIT_FOR_EMBEDDINGS_BELOW = 2_000;
/**
 * Changes (documents and vectors) since the last save that start a new one, at the least: the
 * trigger grows with the index, so saving costs about one document written per one changed.
 */
const SAVE_AFTER_CHANGES = 10_000;
/** How long a shutdown waits for the index to be saved (about a million entries' worth). */
const CLOSE_SAVE_MS = 10_000;

const hasPhrase = (entry: Entry, phrase: ParsedQuery['phrases'][number]): boolean =>
  entryFields(entry).some((f) => containsPhrase(analyze(f.text), phrase));

/**
 * The search index of the filesystem and S3 backends: every live head of every namespace in
 * memory (text postings, and vectors from the embedder), fed by the store's change feed. At
 * start it loads the heads in slices, yielding to requests between them, while the feed's
 * changes wait in a buffer; vectors follow in the background.
 */
export class MemorySearchIndex implements SearchIndex {
  readonly slots = new SlotTable();
  readonly text = new TextIndex();
  vectors: VectorIndex | null;
  readonly queue: EmbedQueue<Entry> | null;
  readonly embedder: Embedder | null;
  readonly logger: Logger;
  private readonly file: SnapshotFile | null;
  private changesSinceSave = 0;
  private saving: Promise<void> | null = null;
  private state: 'building' | 'ready' = 'building';
  private ready: Promise<void> = Promise.resolve();
  private unsubscribe: () => void = () => {};

  constructor(embedder: Embedder | null, logger: Logger, file: SnapshotFile | null = null) {
    this.embedder = embedder;
    this.logger = logger;
    this.file = file;
    this.vectors = embedder?.dimension ? new VectorIndex(embedder.id, embedder.dimension) : null;
    this.queue = embedder ? new EmbedQueue<Entry>(embedder, (entries, vectors) => this.setVectors(entries, vectors), logger) : null;
  }

  /** Subscribe to the feed, then load every head; resolves when text search is complete. */
  start(store: Store): Promise<void> {
    const buffered: Entry[] = [];
    let loading = true;
    this.unsubscribe = store.changes.subscribe((entry) => (loading ? buffered.push(entry) : this.apply(entry)));
    const started = performance.now();
    this.ready = (async () => {
      // A saved index serves every head it holds at that very version; the rest is indexed anew.
      const saved = this.file ? await restoreSnapshot(this, this.file) : null;
      let n = 0;
      let reused = 0;
      for await (const head of store.scanHeads()) {
        if (saved && this.slots.claim(head, (slot) => saved.stamps[slot] === stampOf(head)) >= 0) reused += 1;
        else this.apply(head);
        if (++n % 2_000 === 0) await new Promise((resolve) => setImmediate(resolve));
      }
      if (saved) saved.finish();
      loading = false;
      for (const entry of buffered.splice(0)) this.apply(entry);
      this.state = 'ready';
      this.logger.info({ entries: this.text.docCount, reused, terms: this.text.termCount, ms: Math.round(performance.now() - started) }, 'search index loaded');
    })();
    return this.ready;
  }

  /** Index one version: the newest version of an entry replaces the one held; tombstones remove it. */
  apply(entry: Entry): void {
    const replaced = this.slots.replace(entry);
    if (replaced === undefined) return;
    if (replaced >= 0) {
      this.text.remove(replaced);
      this.vectors?.delete(replaced);
    }
    const slot = this.slots.slotOf(entry);
    if (slot !== undefined) {
      this.text.add(slot, docTerms(entry));
      this.queue?.push({ item: entry, text: embeddingText(entry) });
    }
    const remap = this.slots.compactIfSparse();
    if (remap) {
      this.text.compact(remap, this.slots.size);
      this.vectors?.compact(remap, this.slots.size);
    }
    this.changed(1);
  }

  async textCandidates(query: ParsedQuery, filter: SearchFilter, n: number): Promise<Candidate[]> {
    await this.whenReady();
    const terms = [...query.terms];
    for (const prefixes of query.prefixes) terms.push(...this.text.expandPrefix(prefixes));
    if (terms.length === 0) return [];
    const accept = (slot: number): boolean => {
      const entry = this.slots.entry(slot) as Entry;
      return passesFilter(entry, filter) && query.phrases.every((p) => hasPhrase(entry, p));
    };
    return this.candidates(this.text.search([...new Set(terms)], n, this.slots.alive, accept));
  }

  async vectorCandidates(vector: Float32Array, filter: SearchFilter, n: number): Promise<Candidate[]> {
    await this.whenReady();
    if (!this.queue) return [];
    if (this.embedder?.local && this.queue.pending < WAIT_FOR_EMBEDDINGS_BELOW) await this.queue.idle();
    if (!this.vectors) return [];
    const accept = (slot: number): boolean => passesFilter(this.slots.entry(slot) as Entry, filter);
    return this.candidates(this.vectors.search(vector, n, this.slots.alive, accept));
  }

  status(): SearchIndexStatus {
    return {
      state: this.state,
      entries: this.text.docCount,
      embedder: this.embedder?.id ?? null,
      dimension: this.vectors?.dimension ?? null,
      embedded: this.vectors?.size ?? 0,
      pendingEmbeddings: this.queue?.pending ?? 0,
      vectors: this.queue !== null,
    };
  }

  /** Resolves once every queued embedding is applied (tests, benchmarks). */
  async settled(): Promise<void> {
    await this.ready;
    await this.queue?.idle();
  }

  async close(): Promise<void> {
    this.unsubscribe();
    this.queue?.close();
    // What changed since the last save is saved now, so the next start reads it back.
    // Bounded, so that the store still closes within the shutdown budget: an unfinished save
    // only leaves a temporary file, and the next start checks whatever it reads anyway.
    const timeout = new Promise<void>((resolve) => setTimeout(resolve, CLOSE_SAVE_MS).unref());
    const saved = (async () => {
      await this.saving;
      if (this.state === 'ready' && this.changesSinceSave > 0) await this.save();
    })();
    await Promise.race([saved, timeout]);
  }

  /** Count changes, and save in the background once enough have piled up and embedding caught up. */
  private changed(count: number): void {
    this.changesSinceSave += count;
    if (!this.file || this.saving || this.state !== 'ready') return;
    if (this.changesSinceSave < Math.max(SAVE_AFTER_CHANGES, this.text.docCount / 4)) return;
    if ((this.queue?.pending ?? 0) >= WAIT_FOR_EMBEDDINGS_BELOW) return;
    void this.save();
  }

  private save(): Promise<void> {
    if (!this.file) return Promise.resolve();
    this.changesSinceSave = 0;
    const started = performance.now();
    this.saving = saveSnapshot(this, this.file)
      .then((saved) => {
        if (saved) this.logger.debug({ ms: Math.round(performance.now() - started), entries: saved }, 'search index saved');
      })
      .catch((error: unknown) => this.logger.warn({ err: error }, 'saving the search index failed; the next start rebuilds it from the store'))
      .finally(() => {
        this.saving = null;
      });
    return this.saving;
  }

  private candidates(hits: { slot: number; score: number }[]): Candidate[] {
    return hits.map((h) => ({ entry: this.slots.entry(h.slot) as Entry, score: h.score }));
  }

  private setVectors(entries: Entry[], vectors: Float32Array[]): void {
    // A remote model's dimension is known from its first answer.
    const dimension = vectors[0]?.length ?? 0;
    if (!this.vectors && this.embedder && dimension > 0) this.vectors = new VectorIndex(this.embedder.id, dimension);
    if (this.vectors && dimension !== this.vectors.dimension) {
      this.logger.error({ embedder: this.embedder?.id, expected: this.vectors.dimension, got: dimension }, 'the embedder changed dimension while running; vectors ignored until restart');
      return;
    }
    entries.forEach((entry, i) => {
      // The entry may have been replaced or deleted, or moved by a compaction, meanwhile.
      const slot = this.slots.slotOf(entry);
      if (slot !== undefined && this.slots.entry(slot) === entry) this.vectors?.set(slot, vectors[i] as Float32Array);
    });
    this.changed(entries.length);
  }

  private async whenReady(): Promise<void> {
    if (this.state === 'ready') return;
    const timeout = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), LOADING_WAIT_MS).unref());
    if ((await Promise.race([this.ready.then(() => 'ready' as const), timeout])) === 'timeout') {
      throw unavailable(`the search index is still loading (${this.text.docCount} entries so far); retry shortly`);
    }
  }
}
