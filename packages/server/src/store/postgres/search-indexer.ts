import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { schemaMismatch } from './db-errors.ts';
import type { Entry } from '../../domain/entry.ts';
import type { Embedder } from '../../ports/embedder.ts';
import type { Store } from '../../ports/store.ts';
import { embeddingText } from '../../search-rules/entry-text.ts';
import type { Sql } from './client.ts';
import { type SearchRow, deleteSearchRows, fillVectors, staleHeads, upsertSearchRows, withVectorOf } from './search-rows.ts';
import type { SearchStats } from './search-stats.ts';

const BATCH = 256;
/** Heads checked per sweep query; a sweep reads every head once. */
const SWEEP_PAGE = 2_000;
const SWEEP_EVERY_MS = 5 * 60_000;

export interface IndexerOptions {
  sql: Sql;
  store: Store;
  embedder: Embedder;
  /** Whether the embedding column exists (pgvector installed). */
  vectors: boolean;
  stats: SearchStats;
  logger: Logger;
  /** Vectors may be written for this embedder (its index exists); false until then. */
  vectorsReady: () => boolean;
  /** Called after rows were written without a vector (a remote embedder's backlog). */
  onUnembedded: () => void;
  /** What this process's append of a version kept in its row (PostgresStore.appendKept). */
  appendKept: (entry: Entry) => string | null | undefined;
}

/**
 * Keeps cairn_search current. Each append writes its version's row itself, without a vector,
 * and removes the row of an entry it deletes (append-entry.ts); every version announced on the
 * change feed (this replica's writes and the others') then gets a local embedder's vector
 * here, in batches, and nothing else: the row is there already. A remote embedder's vectors
 * come later from the backlog worker (search-backlog.ts), so writes never wait for, or fail
 * with, the embedding endpoint. A sweep at start and every five minutes writes whole rows for
 * what the appends left stale (a crash between commit and the vector, rows of a server that
 * wrote none). Replicas fill the same rows; a row that has its vector is left alone.
 */
export class SearchIndexer {
  private readonly o: IndexerOptions;
  private readonly pending = new Map<string, Entry>();
  private flushing: Promise<void> | null = null;
  /** Versions taken from `pending` by the batch being embedded and written now. */
  private writing = 0;
  private unsubscribe: () => void = () => {};
  private closed = false;
  indexed = 0;

  constructor(options: IndexerOptions) {
    this.o = options;
  }

  start(): void {
    this.unsubscribe = this.o.store.changes.subscribe((entry) => {
      // Counted as announced, not as flushed: `pending` keeps an entry's newest version only,
      // and a version 1 replaced before the flush took it would never count as a row more.
      // Its row is written (by the append) whether or not the vector that follows is.
      this.o.stats.noteEntry(entry);
      const id = `${entry.namespace}\u0000${entry.entity_path}\u0000${entry.key}`;
      const known = this.pending.get(id);
      if (!known || known.version < entry.version) this.pending.set(id, entry);
      this.flushing ??= this.flush();
    });
    const sweepLoop = async (): Promise<void> => {
      while (!this.closed) {
        await this.sweep().catch((error: unknown) => this.o.logger.warn({ err: schemaMismatch(error, 'search catch-up') ?? error }, 'search catch-up failed; retrying'));
        await sleep(SWEEP_EVERY_MS, undefined, { ref: false });
      }
    };
    void sweepLoop();
  }

  /**
   * Announced versions not yet indexed: each has its text row already, its vector not yet.
   * The batch under way counts until it is written: a gauge read while it is embedded (what
   * `cairn_search_pending_embeddings` shows, and what a caller waiting for the index to catch
   * up reads) said 0 with its vectors still to come.
   */
  get queued(): number {
    return this.pending.size + this.writing;
  }

  /** Resolves when every announced version so far is in cairn_search (or failed to be). */
  async idle(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  close(): void {
    this.closed = true;
    this.unsubscribe();
  }

  /** Index heads the feed did not deliver, until none are left. */
  async sweep(): Promise<void> {
    let after: Parameters<typeof staleHeads>[1] = null;
    do {
      const page = await staleHeads(this.o.sql, after, SWEEP_PAGE);
      for (let i = 0; i < page.stale.length && !this.closed; i += BATCH) await this.write(page.stale.slice(i, i + BATCH), 'sweep', page.vectorOf);
      after = page.last;
    } while (after && !this.closed);
  }

  private async flush(): Promise<void> {
    try {
      while (this.pending.size > 0 && !this.closed) {
        const batch = [...this.pending.values()].slice(0, BATCH);
        for (const e of batch) this.pending.delete(`${e.namespace}\u0000${e.entity_path}\u0000${e.key}`);
        this.writing = batch.length;
        await this.write(batch, 'feed').catch((error: unknown) => {
          // The sweep picks up missing rows once the database answers again, and the embedding
          // backlog the vectors of rows the append already wrote.
          this.o.logger.warn({ err: schemaMismatch(error, 'search indexing') ?? error, entries: batch.length }, 'search indexing failed; the next catch-up retries');
          this.o.onUnembedded();
        });
      }
    } finally {
      this.writing = 0;
      this.flushing = null;
    }
  }

  /**
   * `feed`: versions announced after their append, whose rows only lack the vector (an
   * upsert of the whole row cost a second analysis of the text and, without a vector to add,
   * a statement that changed nothing: a fifth of PostgreSQL's CPU per write with a remote
   * embedder). `sweep`: stale heads, written whole; rows of deleted heads removed. A row that
   * already holds this embedder's vector for the same version (`vectorOf`: its terms are of an
   * older analysis) is not embedded again: the upsert keeps its vector.
   */
  private async write(entries: Entry[], from: 'feed' | 'sweep', vectorOf?: ReadonlyMap<Entry, string>): Promise<void> {
    const live = entries.filter((e) => !e.deleted);
    const rows: SearchRow[] = live.map((entry) => ({ entry }));
    const { embedder } = this.o;
    const embedding = embedder.local && this.o.vectors && this.o.vectorsReady();
    let unembedded = rows.filter(({ entry }) => vectorOf?.get(entry) !== embedder.id);
    if (from === 'feed' && embedding) unembedded = await this.lackingVectors(unembedded);
    if (embedding && unembedded.length > 0) {
      const texts = unembedded.map(({ entry }) => embeddingText(entry));
      const vectors = await (embedder.embedInBackground?.(texts) ?? embedder.embed(texts));
      unembedded.forEach((row, i) => {
        row.vector = vectors[i];
        row.embedder = embedder.id;
      });
    }
    if (from === 'feed') {
      await fillVectors(this.o.sql, rows.flatMap(({ entry, vector, embedder: id }) => (vector && id ? [{ entry, vector, embedder: id }] : [])));
    } else {
      await upsertSearchRows(this.o.sql, rows, this.o.vectors);
      await deleteSearchRows(this.o.sql, entries.filter((e) => e.deleted));
    }
    if (unembedded.some((r) => !r.vector)) this.o.onUnembedded();
    this.indexed += entries.length;
    this.o.stats.noteChanges(entries.length);
  }

  /**
   * The announced versions whose rows do not hold this embedder's vector yet. A version of its
   * predecessor's text kept that version's vector (append-entry.ts): this process's appends
   * say so themselves; for the others (another replica's, whose writer or whose own indexer
   * may have given the vector already, and ours heard of before the append answered) the rows
   * are asked, one statement for the batch, which costs less than embedding them again.
   */
  private async lackingVectors(rows: SearchRow[]): Promise<SearchRow[]> {
    const id = this.o.embedder.id;
    const unknown = rows.filter(({ entry }) => this.o.appendKept(entry) === undefined).map(({ entry }) => entry);
    const filled = unknown.length > 0 ? await withVectorOf(this.o.sql, unknown, id) : new Set<Entry>();
    return rows.filter(({ entry }) => {
      const kept = this.o.appendKept(entry);
      return kept === undefined ? !filled.has(entry) : kept !== id;
    });
  }
}
