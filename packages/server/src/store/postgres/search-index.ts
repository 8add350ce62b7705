import type { Logger } from 'pino';
import type { Entry } from '../../domain/entry.ts';
import type { Embedder } from '../../ports/embedder.ts';
import type { Candidate, ParsedQuery, SearchFilter, SearchIndex, SearchIndexStatus, TextRanking } from '../../ports/search-index.ts';
import type { Store } from '../../ports/store.ts';
import { passesFilter } from '../../search-rules/filter.ts';
import { queryCeiling } from '../../search-rules/bm25.ts';
import { type Sql, createClient } from './client.ts';
import type { PostgresStore } from './postgres-store.ts';
import { storeError, toServiceError } from './db-errors.ts';
import { EmbeddingBacklog } from './search-backlog.ts';
import { SearchIndexer } from './search-indexer.ts';
import { readVersions } from './search-rows.ts';
import { countHolders } from './search-holders.ts';
import { filterSql } from './search-sql.ts';
import { SearchStats } from './search-stats.ts';
import { type KeyRow, rankText } from './search-text.ts';
import { NEAREST_SETTINGS, readNearest } from './search-nearest.ts';
import { prepareSearchVectors, recordedDimension, vectorLiteral, vectorsOf } from './search-vectors.ts';

/**
 * A namespace of fewer rows than this (as the statistics last counted them) is searched by an
 * exact ordered scan of its own rows (the primary key's namespace prefix, then a sort) rather
 * than the HNSW walk, which is built over every namespace and, filtered to a small one, walks
 * mostly other namespaces' rows. 2,000 rows beside 43,000 (built-in embedder, 100 queries,
 * against an exact ranking): the walk found 98.9-99.5 % of the 10 nearest in 7.2-7.7 ms, the
 * scan all of them in 1.9 ms. The scan reads at most this many rows: a namespace grown past it
 * since the statistics were read is searched by the walk instead.
 */
const EXACT_BELOW_ROWS = 5_000;

/**
 * Search on PostgreSQL: tsvector + GIN for text and pgvector HNSW for vectors, over
 * cairn_search (one row per live head, kept by SearchIndexer). Text matches are preselected
 * in SQL and ranked by BM25F in the application (search-text.ts), the formula the
 * in-process index uses.
 */
export class PostgresSearchIndex implements SearchIndex {
  private readonly sql: Sql;
  private readonly embedder: Embedder;
  private readonly vectors: boolean;
  private readonly logger: Logger;
  readonly stats: SearchStats;
  readonly indexer: SearchIndexer;
  private readonly backlog: EmbeddingBacklog | null;
  private indexedDimension: number | null = null;
  private preparing: Promise<void> | null = null;

  constructor(sql: Sql, store: PostgresStore, embedder: Embedder, vectors: boolean, logger: Logger) {
    this.sql = sql;
    this.embedder = embedder;
    this.vectors = vectors;
    this.logger = logger;
    this.stats = new SearchStats(sql, logger);
    this.backlog = vectors ? new EmbeddingBacklog(sql, embedder, logger, (d) => this.ensureVectorIndex(d)) : null;
    if (this.backlog) this.backlog.recordedOurs = () => this.indexedDimension !== null;
    this.indexer = new SearchIndexer({
      sql, store, embedder, vectors, stats: this.stats, logger,
      vectorsReady: () => this.indexedDimension !== null,
      onUnembedded: () => this.backlog?.nudge(),
      appendKept: (entry) => store.appendKept(entry),
    });
  }

  async start(): Promise<void> {
    if (this.vectors && this.embedder.dimension) await this.ensureVectorIndex(this.embedder.dimension);
    // A remote model's dimension is known from its first answer; until then, the one recorded
    // for it serves its rows' vectors (they were searched with no index at all after a restart,
    // until the next write). A query vector of another length sets it right (vectorCandidates).
    else if (this.vectors) this.indexedDimension = await recordedDimension(this.sql, this.embedder.id);
    this.indexer.start();
    this.backlog?.start();
    this.stats.startCounting();
    // Waited for only while the table is small: a large one's is read in the background (SearchStats.open).
    await this.stats.open();
  }

  async ensureVectorIndex(dimension: number): Promise<void> {
    if (this.indexedDimension === dimension && !this.preparing) return;
    // One preparation at a time (the backlog and a search may both learn the dimension).
    while (this.preparing) await this.preparing.catch(() => {});
    if (this.indexedDimension === dimension) return;
    this.preparing = prepareSearchVectors(this.sql, { id: this.embedder.id, dimension }, this.logger).then(() => {
      this.indexedDimension = dimension;
    });
    try {
      await this.preparing;
    } finally {
      this.preparing = null;
    }
  }

  async textCandidates(query: ParsedQuery, filter: SearchFilter, n: number): Promise<TextRanking> {
    return this.guard(async () => {
      const best = await rankText(this.sql, this.stats, query, filter, n);
      const stats = this.stats.of(filter.namespace);
      const ceiling = queryCeiling(query.terms, (term) => stats.docFrequency(term), Math.max(1, stats.docCount));
      return { candidates: await this.withEntries(best.map((b) => b.key), best.map((b) => b.score), filter), ceiling };
    });
  }

  async vectorCandidates(vector: Float32Array, filter: SearchFilter, n: number): Promise<Candidate[]> {
    if (!this.vectors) return [];
    if (!this.embedder.local && vector.length !== this.indexedDimension) {
      // The query's vector is the model's answer now: its length is the dimension (unknown
      // after a restart with nothing recorded, or another than recorded when the model behind
      // the name changed: the rows are then embedded again).
      const changed = this.indexedDimension !== null;
      try {
        await this.ensureVectorIndex(vector.length);
      } catch (error) {
        this.logger.warn({ err: error, dimension: vector.length }, 'the embedding model answers vectors that cannot be indexed');
        return [];
      }
      if (changed) this.backlog?.nudge();
    }
    const dim = this.indexedDimension;
    if (dim === null || vector.length !== dim) return [];
    return this.guard(async () => {
      const f = filterSql(filter, 2);
      const exact = this.stats.of(filter.namespace).docCount < EXACT_BELOW_ROWS ? await this.exactVectorRows(vector, dim, f, n) : null;
      if (exact === null) {
        const near = await readNearest(this.sql, vector, dim, vectorsOf({ id: this.embedder.id, dimension: dim }), f, n);
        return near.filter((r) => passesFilter(r.entry, filter)).map((r) => ({ entry: r.entry, score: 1 - r.distance }));
      }
      exact.sort((a, b) => a.distance - b.distance);
      return this.withEntries(exact, exact.map((r) => 1 - r.distance), filter);
    });
  }

  /**
   * The `n` nearest rows of a small namespace by an exact scan of its rows alone (see
   * EXACT_BELOW_ROWS), or null when it holds more than that many rows with vectors: the scan
   * reads the namespace's rows by the primary key (`namespace` = $2 in `f`), at most one more
   * than the bound, and the distance is ordered as an expression the HNSW index cannot serve.
   */
  private async exactVectorRows(vector: Float32Array, dim: number, f: { where: string; values: (string | number)[] }, n: number): Promise<(KeyRow & { distance: number })[] | null> {
    const distance = `embedding::vector(${dim}) <=> $1::vector(${dim})`;
    const rows = await this.sql.unsafe<(KeyRow & { distance: number | null; held: number })[]>(
      `with mine as materialized (
         select namespace, entity_path, key, version, agent_id, event_type, confidence, written_at, expires_at, ${distance} as distance
           from cairn_search where namespace = $2 and ${vectorsOf({ id: this.embedder.id, dimension: dim })} limit ${EXACT_BELOW_ROWS + 1})
       select r.namespace, r.entity_path, r.key, r.version, r.distance, c.held
         from (select count(*)::int as held from mine) c
         left join lateral (select * from mine where ${f.where} order by distance limit ${Math.trunc(n)}) r on true`,
      [vectorLiteral(vector), ...f.values],
    );
    if ((rows[0]?.held ?? 0) > EXACT_BELOW_ROWS) return null;
    return rows.filter((r): r is KeyRow & { distance: number; held: number } => r.distance !== null);
  }

  /** Search rows live in the database, deleted by the forget itself: nothing kept elsewhere. */
  async persisted(): Promise<void> {}

  holdsTerm(term: string, namespace: string): boolean {
    return this.stats.of(namespace).lists(term);
  }

  termsHeld(terms: readonly string[], filter: SearchFilter, cap: number): Promise<Map<string, number>> {
    return this.guard(() => countHolders(this.sql, terms, filter, cap));
  }

  status(): SearchIndexStatus {
    // Vectors still to come: the indexer's queue (a local embedder's) and the backlog's.
    const pending = (this.backlog?.pending ?? 0) + (this.vectors && this.embedder.local ? this.indexer.queued : 0);
    return {
      state: 'ready',
      entries: this.stats.docCount,
      embedder: this.embedder.id,
      dimension: this.indexedDimension,
      // Rows the embedder refuses have no vector either: not embedded, and not pending.
      embedded: Math.max(0, this.stats.docCount - pending - (this.backlog?.refused ?? 0)),
      pendingEmbeddings: pending,
      unembeddable: this.backlog?.unembeddable ?? 0,
      embedderConflict: this.backlog?.conflict ?? null,
      vectors: this.vectors,
      saving: false,
    };
  }

  /** Every write announced so far is searchable (tests, benchmarks). */
  async settled(): Promise<void> {
    await this.indexer.idle();
    await this.stats.refresh();
  }

  async close(): Promise<void> {
    this.indexer.close();
    this.backlog?.close();
    this.stats.close();
    await this.sql.end({ timeout: 0 });
  }

  private async withEntries(keys: KeyRow[], scores: number[], filter: SearchFilter): Promise<Candidate[]> {
    const entries = await readVersions(this.sql, keys);
    const byId = new Map(entries.map((e) => [`${e.entity_path}\u0000${e.key}\u0000${e.version}`, e]));
    const out: Candidate[] = [];
    keys.forEach((k, i) => {
      const entry = byId.get(`${k.entity_path}\u0000${k.key}\u0000${k.version}`) as Entry | undefined;
      if (entry && passesFilter(entry, filter)) out.push({ entry, score: scores[i] as number });
    });
    return out;
  }

  private async guard<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      // Damage (a version row of another shape) and a table or column gone are answered as
      // damage by the transports, as the store's reads are (db-errors.ts storeError), not as an
      // outage to retry.
      throw storeError(error, 'search', this.logger);
    }
  }
}

/** Search over the PostgreSQL store, on a small pool of its own so searches never starve writes. */
export const openPostgresSearch = async (dsn: string, store: PostgresStore, embedder: Embedder, logger: Logger): Promise<PostgresSearchIndex> => {
  // Each connection starts with the HNSW walk's settings, so that a search's nearest rows take no transaction (search-nearest.ts).
  const sql = createClient({ dsn, logger, max: 4, connectTimeoutS: 3, statementTimeoutMs: 15_000, settings: store.vectors ? NEAREST_SETTINGS : undefined });
  const index = new PostgresSearchIndex(sql, store, embedder, store.vectors, logger);
  try {
    await index.start();
  } catch (error) {
    await sql.end({ timeout: 0 }).catch(() => {});
    throw toServiceError(error, 'opening search', logger);
  }
  return index;
};
