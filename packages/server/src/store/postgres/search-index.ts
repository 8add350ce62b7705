import type { Logger } from 'pino';
import type { Entry } from '../../domain/entry.ts';
import type { Embedder } from '../../ports/embedder.ts';
import type { Candidate, ParsedQuery, SearchFilter, SearchIndex, SearchIndexStatus, TextRanking } from '../../ports/search-index.ts';
import type { Store } from '../../ports/store.ts';
import { passesFilter } from '../../search-rules/filter.ts';
import { queryCeiling } from '../../search-rules/bm25.ts';
import { type Sql, createClient } from './client.ts';
import type { PostgresStore } from './postgres-store.ts';
import { toServiceError } from './db-errors.ts';
import { EmbeddingBacklog } from './search-backlog.ts';
import { SearchIndexer } from './search-indexer.ts';
import { readVersions } from './search-rows.ts';
import { countHolders } from './search-holders.ts';
import { filterSql } from './search-sql.ts';
import { SearchStats } from './search-stats.ts';
import { type KeyRow, rankText } from './search-text.ts';
import { embedderLiteral, prepareSearchVectors, vectorLiteral } from './search-vectors.ts';

/**
 * The HNSW walk's breadth for `n` candidates. Measured at 100k entries of the bench corpus
 * (built-in embedder, 200 queries, 50 candidates each as a search asks): of the exact 10
 * nearest, the walk found 69 % at 100 (pgvector's default), 78 % at 200, 89 % at 400 and 95 %
 * at 1,000, for 1.1, 1.5, 2.0 and 4.0 ms a query. The in-process index finds 83 %.
 */
const efSearch = (n: number): number => Math.max(400, Math.min(1000, 8 * Math.trunc(n)));

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

  constructor(sql: Sql, store: PostgresStore, embedder: Embedder, vectors: boolean, logger: Logger) {
    this.sql = sql;
    this.embedder = embedder;
    this.vectors = vectors;
    this.logger = logger;
    this.stats = new SearchStats(sql, logger);
    this.backlog = vectors ? new EmbeddingBacklog(sql, embedder, logger, (d) => this.ensureVectorIndex(d)) : null;
    this.indexer = new SearchIndexer({
      sql, store, embedder, vectors, stats: this.stats, logger,
      vectorsReady: () => this.indexedDimension !== null,
      onUnembedded: () => this.backlog?.nudge(),
      appendKept: (entry) => store.appendKept(entry),
    });
  }

  async start(): Promise<void> {
    if (this.vectors && this.embedder.dimension) await this.ensureVectorIndex(this.embedder.dimension);
    this.indexer.start();
    this.backlog?.start();
    this.stats.startCounting();
    await this.stats.refresh().catch((error: unknown) => this.logger.warn({ err: error }, 'reading search statistics failed'));
  }

  async ensureVectorIndex(dimension: number): Promise<void> {
    if (this.indexedDimension === dimension) return;
    await prepareSearchVectors(this.sql, { id: this.embedder.id, dimension }, this.logger);
    this.indexedDimension = dimension;
  }

  async textCandidates(query: ParsedQuery, filter: SearchFilter, n: number): Promise<TextRanking> {
    return this.guard(async () => {
      const best = await rankText(this.sql, this.stats, query, filter, n);
      const ceiling = queryCeiling(query.terms, (term) => this.stats.docFrequency(term), Math.max(1, this.stats.docCount));
      return { candidates: await this.withEntries(best.map((b) => b.key), best.map((b) => b.score), filter), ceiling };
    });
  }

  async vectorCandidates(vector: Float32Array, filter: SearchFilter, n: number): Promise<Candidate[]> {
    const dim = this.indexedDimension;
    if (!this.vectors || dim === null || vector.length !== dim) return [];
    return this.guard(async () => {
      const f = filterSql(filter, 2);
      const distance = `embedding::vector(${dim}) <=> $1::vector(${dim})`;
      const rows = await this.sql.begin(async (tx) => {
        // Filters apply after the HNSW walk; iterative scans keep walking until enough rows pass.
        // Both settings in one simple-protocol message: one round trip fewer per search.
        await tx.unsafe(`set local hnsw.ef_search = ${efSearch(n)}; set local hnsw.iterative_scan = relaxed_order`).simple();
        return tx.unsafe<(KeyRow & { distance: number })[]>(
          `select namespace, entity_path, key, version, ${distance} as distance from cairn_search
            where embedder = ${embedderLiteral(this.embedder.id)} and ${f.where}
            order by ${distance} limit ${Math.trunc(n)}`,
          [vectorLiteral(vector), ...f.values],
        );
      });
      rows.sort((a, b) => a.distance - b.distance);
      return this.withEntries(rows, rows.map((r) => 1 - r.distance), filter);
    });
  }

  /** Search rows live in the database, deleted by the forget itself: nothing kept elsewhere. */
  async persisted(): Promise<void> {}

  holdsTerm(term: string): boolean {
    return this.stats.lists(term);
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
      embedded: Math.max(0, this.stats.docCount - pending),
      pendingEmbeddings: pending,
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
      throw toServiceError(error, 'search', this.logger);
    }
  }
}

/** Search over the PostgreSQL store, on a small pool of its own so searches never starve writes. */
export const openPostgresSearch = async (dsn: string, store: PostgresStore, embedder: Embedder, logger: Logger): Promise<PostgresSearchIndex> => {
  const sql = createClient({ dsn, logger, max: 4, connectTimeoutS: 3, statementTimeoutMs: 15_000 });
  const index = new PostgresSearchIndex(sql, store, embedder, store.vectors, logger);
  try {
    await index.start();
  } catch (error) {
    await sql.end({ timeout: 0 }).catch(() => {});
    throw toServiceError(error, 'opening search', logger);
  }
  return index;
};
