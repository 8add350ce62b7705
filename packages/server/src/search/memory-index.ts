import type { Logger } from 'pino';
import type { Entry } from '../domain/entry.ts';
import { unavailable } from '../domain/errors.ts';
import type { ChangeFeed } from '../ports/change-feed.ts';
import type { Embedder } from '../ports/embedder.ts';
import type { Candidate, ParsedQuery, SearchFilter, SearchIndex, SearchIndexStatus, TextRanking } from '../ports/search-index.ts';
import type { ForgetTarget, Store } from '../ports/store.ts';
import { forgetNames } from '../domain/forget-target.ts';
import { queryCeiling, worthExpanding } from '../search-rules/bm25.ts';
import { docTerms, embeddingText, sameText } from '../search-rules/entry-text.ts';
import { entryMemo } from '../search-rules/entry-memo.ts';
import { namespaceOnly, passesFilter } from '../search-rules/filter.ts';
import { phraseTest } from '../search-rules/phrase-test.ts';
import { slicer } from './byte-codec.ts';
import { EmbedQueue } from './embed-queue.ts';
import { type SnapshotFile, stampOf } from './index-snapshot.ts';
import { type Restored, restoreSnapshot } from './index-persistence.ts';
import { IndexSaver } from './index-saver.ts';
import { SlotTable } from './slot-table.ts';
import { TextIndex } from './text-index.ts';
import { VectorIndex } from './vector-index.ts';
import { yieldTurns } from '../event-loop.ts';

/** Searches arriving while the index loads wait this long before answering UNAVAILABLE. */
const LOADING_WAIT_MS = 3_000;
/** How long the slices applying the writes heard while loading may go on (searches wait LOADING_WAIT_MS for the index, then fail). */
const DRAIN_SLICED_MS = 2_000;
/** Heads offered to the index between two yields to the event loop while it loads. */
const HEADS_PER_TURN = 2_000;
/** While fewer embeddings than this are queued, a vector search waits for them (read-your-writes). */
const WAIT_FOR_EMBEDDINGS_BELOW = 2_000;

/**
 * A version's terms, kept for when the next version replaces it: the replaced version's terms
 * leave the document frequencies, and analysing its text again cost as much as indexing the
 * new one (an update or a connector's delivery analysed two versions). Recent versions only:
 * about 2 MB of terms (a term's place counted as 64 bytes; at 8 MB the bench's index memory
 * read 140 MiB per 100k entries against 135 before, at 2 MB 136), then it starts afresh.
 */
const termsOf = entryMemo(docTerms, (terms) => terms.tf.size * 64, 2 * 1024 * 1024);

/**
 * The search index of the filesystem and S3 backends: every live head of every namespace in
 * memory (text postings, and vectors from the embedder), fed by the store's change feed. At
 * start it loads the heads in slices, yielding to requests between them, while the feed's
 * changes wait in a buffer; vectors follow in the background.
 */
export class MemorySearchIndex implements SearchIndex {
  readonly slots = new SlotTable();
  /** Replaced whole only at start, when the saved index's terms were of another analysis. */
  text = new TextIndex();
  vectors: VectorIndex | null;
  readonly queue: EmbedQueue<Entry> | null;
  readonly embedder: Embedder | null;
  readonly logger: Logger;
  private readonly file: SnapshotFile | null;
  private readonly saver: IndexSaver | null;
  /** Writes that arrive while the index loads, applied once it has. */
  private readonly buffered: Entry[] = [];
  /** How many of `buffered` are applied already (they are applied in slices; see drainBuffered). */
  private drained = 0;
  private persisting: Promise<void> = Promise.resolve();
  /** The save that follows the load, for the forgets heard while loading. */
  private savedAfterLoad: Promise<void> | null = null;
  private state: 'building' | 'ready' = 'building';
  private ready: Promise<void> = Promise.resolve();
  private unsubscribe: () => void = () => {};

  constructor(embedder: Embedder | null, logger: Logger, file: SnapshotFile | null = null) {
    this.embedder = embedder;
    this.logger = logger;
    this.file = file;
    this.saver = file ? new IndexSaver(this, file) : null;
    this.vectors = embedder?.dimension ? new VectorIndex(embedder.id, embedder.dimension) : null;
    this.queue = embedder ? new EmbedQueue<Entry>(embedder, (entries, vectors) => this.setVectors(entries, vectors), logger) : null;
  }

  /**
   * An index of `entries` alone, ready at once and kept nowhere, fed by no store: what the
   * search warm-up at start ranks (services/warm-search.ts).
   */
  static over(entries: readonly Entry[], embedder: Embedder | null, logger: Logger): MemorySearchIndex {
    const index = new MemorySearchIndex(embedder, logger);
    for (const entry of entries) index.apply(entry);
    index.state = 'ready';
    return index;
  }

  /**
   * Subscribe to the feed, then load every head; resolves when text search is complete.
   * `ownWrites`: where the store announces this process's writes before `changes` does (see
   * PostgresStore.ownWrites); each version may then come twice, and the second is ignored.
   */
  start(store: Store, ownWrites?: ChangeFeed): Promise<void> {
    const buffered = this.buffered;
    let loading = true;
    const take = (entry: Entry) => (loading ? buffered.push(entry) : this.apply(entry));
    const unsubscribeFeed = store.changes.subscribe(take);
    const unsubscribeOwn = ownWrites?.subscribe(take) ?? (() => {});
    const unsubscribeWrites = () => {
      unsubscribeFeed();
      unsubscribeOwn();
    };
    // Forgets apply at once, loading or not: the store no longer offers what they name. Those
    // heard while loading apply again once the heads are read: a page of heads read before a
    // forget committed may be indexed after it was heard (PostgreSQL reads them over the network).
    const forgottenWhileLoading: ForgetTarget[] = [];
    const unsubscribeForgets = store.changes.subscribeForgets((target) => {
      if (loading) forgottenWhileLoading.push(target);
      this.forget(target);
    });
    this.unsubscribe = () => {
      unsubscribeWrites();
      unsubscribeForgets();
    };
    const started = performance.now();
    this.ready = (async () => {
      // A saved index serves every head it holds at that very version; the rest is indexed anew.
      const saved = this.file ? await restoreSnapshot(this, this.file) : null;
      const reused = await this.takeHeads(store, saved);
      const reanalysed = saved ? await saved.finish() : 0;
      // Before the writes that came meanwhile, which may write a forgotten address anew.
      for (const target of forgottenWhileLoading.splice(0)) this.dropSlots(target);
      await this.drainBuffered();
      // Caught up, with no pause since: from here on a write is applied as it is heard.
      loading = false;
      this.state = 'ready';
      // The file holds another analysis's terms: replaced now, not after the next writes.
      if (reanalysed > 0) void this.saver?.replaceStale();
      this.logger.info({ entries: this.text.docCount, reused, terms: this.text.termCount, ms: Math.round(performance.now() - started) }, 'search index loaded');
    })();
    return this.ready;
  }

  /**
   * Offer every head of the store to the index: a saved slot holding its very version serves
   * it, anything else is indexed anew. Answers how many saved slots served. The saved index
   * numbered the heads in the order the store scans them, mostly, so each head is first looked
   * for in the slot after the last one claimed; heads the store holds in memory are walked
   * without an await each (Store.heldHeads).
   */
  private async takeHeads(store: Store, saved: Restored | null): Promise<number> {
    let reused = 0;
    let next = 0;
    const take = (head: Entry): void => {
      const slot = saved ? this.slots.claim(head, (at) => saved.stamps[at] === stampOf(head), next) : -1;
      if (slot >= 0) {
        reused += 1;
        next = slot + 1;
      } else this.apply(head);
    };
    let n = 0;
    const held = await store.heldHeads?.();
    if (held) {
      for (const head of held) {
        take(head);
        if (++n % HEADS_PER_TURN === 0) await yieldTurns();
      }
    } else {
      for await (const head of store.scanHeads()) {
        take(head);
        if (++n % HEADS_PER_TURN === 0) await yieldTurns();
      }
    }
    return reused;
  }

  /** Index one version: the newest version of an entry replaces the one held; tombstones remove it. */
  apply(entry: Entry): void {
    // The version replaced, whose terms stop counting in their document frequencies (a slot of
    // a saved index not matched to its head yet holds none).
    const held = this.slots.slotOf(entry);
    const previous = held === undefined ? undefined : this.slots.entry(held);
    if (held !== undefined && previous !== undefined && previous.version < entry.version && sameText(previous, entry)) {
      this.renew(held, entry);
      return;
    }
    const replaced = this.slots.replace(entry);
    if (replaced === undefined) return;
    if (replaced >= 0) {
      this.text.remove(replaced, previous && termsOf(previous));
      this.vectors?.delete(replaced);
    }
    const slot = this.slots.slotOf(entry);
    if (slot !== undefined) {
      this.text.add(slot, termsOf(entry), this.slots.namespaceAt(slot));
      this.queue?.push({ item: entry, text: embeddingText(entry) });
    }
    const remap = this.slots.compactIfSparse();
    if (remap) {
      this.text.compact(remap, this.slots.size);
      this.vectors?.compact(remap, this.slots.size);
    }
    this.saver?.changed(1, this.state === 'ready');
  }

  /**
   * A version whose searchable text is its predecessor's (a new confidence, evidence, event type
   * or provenance: outcomes, connector events that change no field Cairn keeps) takes its
   * predecessor's slot, terms and vector: analysing and embedding the same text again, and
   * moving its postings to a new slot, would change nothing a search finds. The predecessor's
   * embedding may still be on its way (`setVectors` keeps only the held version's): then this
   * version is embedded instead.
   */
  private renew(slot: number, entry: Entry): void {
    this.slots.renew(slot, entry);
    if (this.queue && !this.vectors?.holds(slot)) this.queue.push({ item: entry, text: embeddingText(entry) });
    this.saver?.changed(1, this.state === 'ready');
  }

  /** Drop every entry `target` names, text and vectors, and save the index file again without them. */
  forget(target: ForgetTarget): void {
    const buffered = this.buffered;
    for (let i = buffered.length - 1; i >= this.drained; i--) if (forgetNames(target, buffered[i] as Entry)) buffered.splice(i, 1);
    this.dropSlots(target);
    const saver = this.saver;
    if (!saver) return;
    // While loading, nothing is saved; the file read at the start may hold what was forgotten,
    // so one save follows the load (a failed load saves nothing, and leaves the file to the next start).
    if (this.state === 'ready') this.persisting = saver.saveNow();
    else this.persisting = this.savedAfterLoad ??= this.ready.then(() => saver.saveNow(), () => {});
  }

  /**
   * Apply the writes heard while the index loaded, in order, in slices between requests; those
   * heard meanwhile join the end, until none is left. At a million entries, applied in one
   * block, the writes of the seconds a restart's load takes under load (about 27k) held the
   * event loop for a second: each restored posting list they touch is copied into an array of
   * its own, and those allocations set the garbage collector marking a heap of 2 GB.
   */
  private async drainBuffered(): Promise<void> {
    const buffered = this.buffered;
    const pause = slicer();
    // Writes arriving faster than the slices apply them would keep the index loading for ever:
    // past this, the rest is applied in one block (a pause, but the index becomes ready).
    const slicedUntil = performance.now() + DRAIN_SLICED_MS;
    while (this.drained < buffered.length) {
      this.apply(buffered[this.drained++] as Entry);
      if (performance.now() < slicedUntil) await pause();
    }
    buffered.length = 0;
    this.drained = 0;
  }

  /** Remove from the indexes every entry `target` names. */
  private dropSlots(target: ForgetTarget): void {
    for (const { slot, entry } of this.slots.forget((address) => forgetNames(target, address))) {
      this.text.remove(slot, entry && termsOf(entry));
      this.vectors?.delete(slot);
    }
  }

  /** Resolves once the saved index file holds nothing forgotten so far. */
  async persisted(): Promise<void> {
    await this.persisting;
  }

  async textCandidates(query: ParsedQuery, filter: SearchFilter, n: number): Promise<TextRanking> {
    await this.whenReady();
    // Every statistic is the searched namespace's own (text-index.ts statsOf): another
    // namespace's entries move no score, bound, ceiling or expansion here.
    const space = this.slots.namespaceCode(filter.namespace);
    const stats = this.text.statsOf(space);
    const ceiling = queryCeiling(query.terms, stats.df, Math.max(1, stats.docs));
    const terms = [...query.terms];
    // A prefix stands for the words the entries this search may return hold, not the whole index's.
    const scoped = this.acceptor(filter);
    const inScope = (term: string): boolean => this.text.holders(term, 1, this.slots.alive, scoped) > 0;
    for (const prefixes of query.prefixes) terms.push(...this.text.expandPrefix(prefixes, inScope, space));
    if (terms.length === 0) return { candidates: [], ceiling };
    const weights = new Map<string, number>();
    for (const { term, weight } of query.expansions ?? []) {
      if (!terms.includes(term) && worthExpanding(stats.df(term), stats.docs)) weights.set(term, weight);
    }
    const accept = this.acceptor(filter, query.phrases.length === 0 ? undefined : phraseTest(query.phrases));
    return { candidates: this.candidates(this.text.search([...new Set([...terms, ...weights.keys()])], n, this.slots.alive, accept, weights, space)), ceiling };
  }

  async termsHeld(terms: readonly string[], filter: SearchFilter, cap: number): Promise<Map<string, number>> {
    await this.whenReady();
    const accept = this.acceptor(filter);
    return new Map(terms.map((term) => [term, this.text.holders(term, cap, this.slots.alive, accept)]));
  }

  holdsTerm(term: string, namespace: string): boolean {
    return this.state === 'ready' && this.text.statsOf(this.slots.namespaceCode(namespace)).df(term) > 0;
  }

  async vectorCandidates(vector: Float32Array, filter: SearchFilter, n: number): Promise<Candidate[]> {
    await this.whenReady();
    if (!this.queue) return [];
    if (this.embedder?.local && this.queue.pending < WAIT_FOR_EMBEDDINGS_BELOW) await this.queue.idle();
    if (!this.vectors) return [];
    // The query's vector is the remote model's answer now: of another length, the saved vectors are another model's.
    if (this.embedder && !this.embedder.local && vector.length > 0 && vector.length !== this.vectors.dimension) this.redimension(vector.length, new Set());
    // The namespace's own vectors, where it is small beside the rest (vector-index.ts `search`).
    const scope = { spaces: this.slots.namespaceNumbers, code: this.slots.namespaceCode(filter.namespace) };
    return this.candidates(this.vectors.search(vector, n, this.slots.alive, this.acceptor(filter), scope));
  }

  status(): SearchIndexStatus {
    return {
      state: this.state,
      entries: this.text.docCount,
      embedder: this.embedder?.id ?? null,
      dimension: this.vectors?.dimension ?? null,
      embedded: this.vectors?.size ?? 0,
      pendingEmbeddings: this.queue?.pending ?? 0,
      unembeddable: this.queue?.unembeddable ?? 0,
      vectors: this.queue !== null,
      saving: this.saver?.saving ?? false,
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
    await this.saver?.close(this.state === 'ready');
  }

  /**
   * Which slots a search may return. The usual filter, a namespace and liveness now, is
   * answered from the slot table's per-slot numbers, reading an entry only when it may have
   * expired; any other filter (paths, agent, type, confidence, time, phrases in `also`) reads
   * the entry.
   */
  private acceptor(filter: SearchFilter, also?: (entry: Entry) => boolean): (slot: number) => boolean {
    const slots = this.slots;
    const full = (slot: number): boolean => {
      const entry = slots.entry(slot) as Entry;
      return passesFilter(entry, filter) && (also === undefined || also(entry));
    };
    const code = slots.namespaceCode(filter.namespace);
    if (also !== undefined || !namespaceOnly(filter) || code === 0) return full;
    return (slot) => slots.namespaceAt(slot) === code && (!slots.mayExpire(slot) || full(slot));
  }

  private candidates(hits: { slot: number; score: number }[]): Candidate[] {
    return hits.map((h) => ({ entry: this.slots.entry(h.slot) as Entry, score: h.score }));
  }

  private setVectors(entries: Entry[], vectors: Float32Array[]): void {
    // A remote model's dimension is known from its first answer.
    const dimension = vectors[0]?.length ?? 0;
    if (!this.vectors && this.embedder && dimension > 0) this.vectors = new VectorIndex(this.embedder.id, dimension);
    if (this.vectors && dimension !== this.vectors.dimension) {
      if (!this.embedder || this.embedder.local || dimension === 0) {
        this.logger.error({ embedder: this.embedder?.id, expected: this.vectors.dimension, got: dimension }, 'the embedder changed dimension while running; vectors ignored until restart');
        return;
      }
      this.redimension(dimension, new Set(entries));
    }
    entries.forEach((entry, i) => {
      // The entry may have been replaced or deleted, or moved by a compaction, meanwhile.
      const slot = this.slots.slotOf(entry);
      if (slot !== undefined && this.slots.entry(slot) === entry) this.vectors?.set(slot, vectors[i] as Float32Array);
    });
    this.saver?.changed(entries.length, this.state === 'ready');
  }

  /**
   * A remote model answering another dimension under the same name than the saved index's
   * vectors (the model behind it changed between two runs): they cannot be compared with its
   * answers. They are dropped and every entry (but `coming`, whose vectors are here) is
   * embedded again.
   */
  private redimension(dimension: number, coming: ReadonlySet<Entry>): void {
    if (!this.embedder || !this.queue) return;
    this.logger.warn({ embedder: this.embedder.id, from: this.vectors?.dimension, to: dimension }, 'the embedding model answers another dimension than the saved vectors: every entry is embedded again');
    this.vectors = new VectorIndex(this.embedder.id, dimension);
    const alive = this.slots.alive;
    for (let slot = 0; slot < this.slots.size; slot++) {
      const entry = this.slots.entry(slot);
      if (entry && alive[slot] === 1 && !coming.has(entry)) this.queue.push({ item: entry, text: embeddingText(entry) });
    }
  }

  private async whenReady(): Promise<void> {
    if (this.state === 'ready') return;
    const timeout = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), LOADING_WAIT_MS).unref());
    const loaded = await Promise.race([this.ready.then(() => 'ready' as const, () => 'failed' as const), timeout]);
    if (loaded === 'timeout') throw unavailable(`the search index is still loading (${this.text.docCount} entries so far); retry shortly`);
    // The failure itself was logged when it happened (open-memory-search.ts).
    if (loaded === 'failed') throw unavailable('the search index could not be loaded (the server log says why); search is unavailable until the server restarts');
  }
}
