import type { Logger } from 'pino';
import type { Entry, EntryAddress } from '../../domain/entry.ts';
import { unavailable } from '../../domain/errors.ts';
import type { ChangeFeed } from '../../ports/change-feed.ts';
import { type HistoryQuery, type ListPage, type ListQuery, type Store, VersionConflict } from '../../ports/store.ts';
import { appendEntry } from './append-entry.ts';
import type { Sql } from './client.ts';
import { toServiceError } from './db-errors.ts';
import { withDeadline } from './deadline.ts';
import { type EntryRow, rowToEntry, selectEntryColumns } from './entry-row.ts';
import { listEntries } from './list-entries.ts';
import { SCHEMA_LOCK } from './migrate.ts';
import { EmbeddingDimensionError, prepareEmbeddings } from './vectors.ts';
import type { WriteFeed } from './write-feed.ts';

const COLUMNS = selectEntryColumns('v');
const MAX_VERSION = 2 ** 31 - 1; // the version column is an int4

/**
 * The Store port over PostgreSQL (schema in migrations/). Every method is one indexed
 * statement; every failure leaves as VersionConflict or a ServiceError, never a driver error.
 */
export class PostgresStore implements Store {
  readonly backend = 'postgres' as const;
  readonly changes: ChangeFeed;
  /** Whether pgvector is installed, so embeddings can be stored and searched. */
  readonly vectors: boolean;
  private readonly sql: Sql;
  private readonly feed: WriteFeed;
  private readonly logger: Logger;
  private readonly timeoutMs: number;
  private closing: Promise<void> | null = null;

  constructor(sql: Sql, feed: WriteFeed, options: { logger: Logger; vectors: boolean; timeoutMs: number }) {
    this.sql = sql;
    this.feed = feed;
    this.changes = feed.changes;
    this.vectors = options.vectors;
    this.logger = options.logger;
    this.timeoutMs = options.timeoutMs;
  }

  head(a: EntryAddress): Promise<Entry | null> {
    return this.run('head', async () => {
      const rows = await this.sql<EntryRow[]>`
        select ${this.sql.unsafe(COLUMNS)} from cairn_versions v
         where v.namespace = ${a.namespace} and v.entity_path = ${a.entity_path} and v.key = ${a.key}
         order by v.version desc limit 1`;
      return rows[0] ? rowToEntry(rows[0]) : null;
    });
  }

  version(a: EntryAddress, version: number): Promise<Entry | null> {
    if (!Number.isInteger(version) || version < 1 || version > MAX_VERSION) return Promise.resolve(null);
    return this.run('version', async () => {
      const rows = await this.sql<EntryRow[]>`
        select ${this.sql.unsafe(COLUMNS)} from cairn_versions v
         where v.namespace = ${a.namespace} and v.entity_path = ${a.entity_path} and v.key = ${a.key}
           and v.version = ${version}`;
      return rows[0] ? rowToEntry(rows[0]) : null;
    });
  }

  history(a: EntryAddress, q: HistoryQuery): Promise<Entry[]> {
    const before = Math.min(q.beforeVersion ?? MAX_VERSION + 1, MAX_VERSION + 1);
    return this.run('history', async () => {
      const rows = await this.sql<EntryRow[]>`
        select ${this.sql.unsafe(COLUMNS)} from cairn_versions v
         where v.namespace = ${a.namespace} and v.entity_path = ${a.entity_path} and v.key = ${a.key}
           and v.version < ${before}::int8
         order by v.version desc limit ${Math.max(0, q.limit)}`;
      return rows.map(rowToEntry);
    });
  }

  list(q: ListQuery): Promise<ListPage> {
    return this.run('list', () => listEntries(this.sql, q));
  }

  async append(entry: Entry, expectedHead: number): Promise<void> {
    const seq = await this.run('append', () => appendEntry(this.sql, entry, expectedHead));
    this.feed.remember(seq, entry);
  }

  ping(): Promise<void> {
    return this.run('ping', async () => {
      await this.sql`select 1`;
    });
  }

  /** Records the embedder's dimension and builds its HNSW index (see vectors.ts). */
  prepareEmbeddings(dimension: number): Promise<void> {
    if (!this.vectors) return Promise.reject(new Error('vector search is disabled: pgvector is not installed'));
    return this.run('prepare embeddings', () => prepareEmbeddings(this.sql, dimension, SCHEMA_LOCK), 0);
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      const draining = this.feed.close();
      await this.sql.end({ timeout: 5 });
      await draining;
    })();
    return this.closing;
  }

  /** Runs one operation under the deadline and turns failures into the port's errors. */
  private async run<T>(operation: string, work: () => Promise<T>, timeoutMs = this.timeoutMs): Promise<T> {
    if (this.closing) throw unavailable('the store is closed');
    try {
      return await (timeoutMs > 0 ? withDeadline(work(), timeoutMs, operation) : work());
    } catch (error) {
      // Conflicts are the port's own answer; a wrong dimension is the caller's configuration.
      if (error instanceof VersionConflict || error instanceof EmbeddingDimensionError) throw error;
      throw toServiceError(error, operation, this.logger);
    }
  }
}
