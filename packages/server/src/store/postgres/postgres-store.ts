import type { Logger } from 'pino';
import type { Entry, EntryAddress } from '../../domain/entry.ts';
import { VersionConflict, unavailable } from '../../domain/errors.ts';
import type { ChangeFeed } from '../../ports/change-feed.ts';
import type { RecordListQuery, StoredRecord } from '../../ports/records.ts';
import { continuesEarlierItem } from '../batch-runs.ts';
import type { BatchItem, CompactionResult, ForgetTarget, HistoryQuery, LinkedToQuery, ListPage, ListQuery, Store } from '../../ports/store.ts';
import { randomUUID } from 'node:crypto';
import { DEFAULT_FORGET_LOG_KEEP_MS, dropVersionRows, forgetRows, vacuumTables } from './forget.ts';
import { appendBatch } from './append-batch.ts';
import type { Appended } from './append-entry.ts';
import { readLinkedTo } from './read-links.ts';
import { AppendBatcher } from './append-batcher.ts';
import { RecordOps } from './record-ops.ts';
import type { Sql } from './client.ts';
import { retryingRollbacks, storeError } from './db-errors.ts';
import { type WriteGuard, guardedWrite, withDeadline } from './deadline.ts';
import { boundLines, outsideTurn, turnDeadline } from '../../domain/turns.ts';
import { listEntries } from './list-entries.ts';
import { listEntriesAsOf } from './list-as-of.ts';
import { SCHEMA_LOCK } from './migrate.ts';
import { SchemaMismatchError } from './damaged-row.ts';
import type { SchemaCheck } from './schema-check.ts';
import { HeadReads } from './head-reads.ts';
import { MAX_VERSION, readHeadsPage, readHistory, readVersion, readVersionAt } from './read-entries.ts';
import * as records from './records.ts';
import { readNamespaces } from './read-namespaces.ts';
import { EmbeddingDimensionError, prepareEmbeddings } from './vectors.ts';
import type { WriteFeed } from './write-feed.ts';

const SCAN_PAGE = 1000;
/**
 * Head-read statements out at once; reads beyond them share statements (head-reads.ts).
 * Measured at 50 connections on 2 cores: 4 gave 22.3–23.5k reads/s, 2 gave 22.1–22.4k and
 * 8–10 gave 17.4–21k (more statements, less sharing).
 */
const HEAD_READS_IN_FLIGHT = 4;
/** Statements of each kind of record operation out at once; more share statements (record-ops.ts). */
const RECORD_OPS_IN_FLIGHT = 4;
/** How long before its deadline a write's statements are cancelled, so its answer (what the database did) comes by the deadline. */
const cancelMargin = (timeoutMs: number): number => Math.min(1_000, timeoutMs / 10);

/**
 * The Store port over PostgreSQL (schema in migrations/). Every method is one indexed
 * statement; every failure leaves as VersionConflict, a ServiceError, or DamagedRowError or
 * SchemaMismatchError (damaged-row.ts: what no retry gets past), never a driver error.
 */
export class PostgresStore implements Store {
  readonly backend = 'postgres' as const;
  readonly changes: ChangeFeed;
  /** This process's own versions as their commit returns (WriteFeed.ownWrites). */
  readonly ownWrites: ChangeFeed;
  /** Whether pgvector is installed, so embeddings can be stored and searched. */
  readonly vectors: boolean;
  private readonly sql: Sql;
  /** A connection of its own for ping(), outside the pool (see index.ts). */
  private readonly probe: Sql;
  /** The schema as migrated, which ping() checks is still whole. */
  private readonly schema: SchemaCheck;
  private readonly feed: WriteFeed;
  private readonly appends: AppendBatcher;
  private readonly heads: HeadReads;
  private readonly recordOps: RecordOps;
  private readonly logger: Logger;
  private readonly timeoutMs: number;
  /** How long a forget's row stays in cairn_forget_log (PostgresStoreOptions.forgetLogKeepMs). */
  private readonly forgetLogKeepMs: number;
  private closing: Promise<void> | null = null;
  /** This process's appended entries, and the embedder of the vector their search row kept (appendKept). */
  private readonly keptVectors = new WeakMap<Entry, string | null>();
  /** Operations under way, which close() lets finish. */
  private readonly running = new Set<Promise<unknown>>();

  constructor(sql: Sql, feed: WriteFeed, options: { logger: Logger; vectors: boolean; timeoutMs: number; writers: number; probe: Sql; schema: SchemaCheck; forgetLogKeepMs?: number }) {
    this.sql = sql;
    this.probe = options.probe;
    this.schema = options.schema;
    this.appends = new AppendBatcher(sql, options.writers);
    this.heads = new HeadReads(sql, HEAD_READS_IN_FLIGHT, options.timeoutMs > 0 ? options.timeoutMs : Infinity);
    this.recordOps = new RecordOps(sql, RECORD_OPS_IN_FLIGHT, options.timeoutMs > 0 ? options.timeoutMs : Infinity);
    this.feed = feed;
    this.changes = feed.changes;
    this.ownWrites = feed.ownWrites;
    this.vectors = options.vectors;
    this.logger = options.logger;
    this.timeoutMs = options.timeoutMs;
    this.forgetLogKeepMs = options.forgetLogKeepMs ?? DEFAULT_FORGET_LOG_KEEP_MS;
    // A write's deadline starts when it joins its entry's line (domain/turns.ts), not at its turn.
    boundLines(this, options.timeoutMs);
  }

  head(a: EntryAddress): Promise<Entry | null> {
    return this.run('head', () => this.heads.read(a));
  }

  version(a: EntryAddress, version: number): Promise<Entry | null> {
    if (!Number.isInteger(version) || version < 1 || version > MAX_VERSION) return Promise.resolve(null);
    return this.run('version', () => readVersion(this.sql, a, version));
  }

  versionAt(a: EntryAddress, at: number): Promise<Entry | null> {
    return this.run('version at', () => readVersionAt(this.sql, a, new Date(at)));
  }

  history(a: EntryAddress, q: HistoryQuery): Promise<Entry[]> {
    const before = Math.min(q.beforeVersion ?? MAX_VERSION + 1, MAX_VERSION + 1);
    return this.run('history', () => readHistory(this.sql, a, before, Math.max(0, q.limit)));
  }

  list(q: ListQuery): Promise<ListPage> {
    return this.run('list', () => (q.asOf === undefined ? listEntries(this.sql, q) : listEntriesAsOf(this.sql, { ...q, asOf: q.asOf })));
  }

  linkedTo(target: EntryAddress, query?: LinkedToQuery): Promise<Entry[]> {
    return this.run('linkedTo', () => readLinkedTo(this.sql, target, query));
  }

  /** Pages through cairn_heads, one short query per page, so a long scan pins nothing. */
  async *scanHeads(): AsyncIterable<Entry> {
    let after: EntryAddress | undefined;
    for (;;) {
      const page = await this.run('scan heads', () => readHeadsPage(this.sql, after, SCAN_PAGE));
      // What an in-process index loads from: checked after an absence (WriteFeed.recheck).
      for (const entry of page) this.feed.hold(entry);
      yield* page;
      after = page.at(-1);
      if (page.length < SCAN_PAGE) return;
    }
  }

  /** One loose index scan of cairn_heads (read-namespaces.ts). */
  listNamespaces(): Promise<string[]> {
    return this.run('list namespaces', () => readNamespaces(this.sql));
  }

  async append(entry: Entry, expectedHead: number): Promise<void> {
    const mark = this.feed.forgets.mark();
    const appended = await this.write('append', (guard) => retryingRollbacks(() => this.appends.append(entry, expectedHead, guard)));
    this.noteKept(entry, appended);
    // Listeners (the search indexer) read on their own time, not what is left of this write's.
    outsideTurn(() => this.feed.appended([{ seq: appended.seq, entry }], mark));
  }

  async appendBatch(items: readonly BatchItem[]): Promise<void> {
    // A malformed batch is the caller's mistake, not an outage: refuse it before the database.
    continuesEarlierItem(items);
    const mark = this.feed.forgets.mark();
    const appended = await this.write('append batch', (guard) => retryingRollbacks(() => appendBatch(this.sql, items, guard)));
    items.forEach(({ entry }, i) => this.noteKept(entry, appended[i] as Appended));
    outsideTurn(() => this.feed.appended(items.map(({ entry }, i) => ({ seq: (appended[i] as Appended).seq, entry })), mark));
  }

  /**
   * What this process's append of `entry` kept in its search row: the embedder of the vector
   * (its text was its predecessor's: append-entry.ts), or null for none. Undefined for a
   * version this process did not append, or whose entry object came back from the database
   * (another replica's; its notification ahead of the append's answer).
   */
  appendKept(entry: Entry): string | null | undefined {
    return this.keptVectors.get(entry);
  }

  private noteKept(entry: Entry, appended: Appended): void {
    this.keptVectors.set(entry, appended.keptEmbedder);
  }

  /** One transaction over every table; other replicas hear of it through NOTIFY cairn_forget. */
  async forget(target: ForgetTarget): Promise<EntryAddress[]> {
    const id = randomUUID();
    this.feed.expectForget(id);
    const { removed, seq } = await this.write('forget', (guard) => retryingRollbacks(() => forgetRows(this.sql, target, id, guard, this.forgetLogKeepMs)));
    if (removed.length > 0) this.feed.forgotten(target, seq);
    return removed;
  }

  dropVersionsBefore(a: EntryAddress, version: number): Promise<number> {
    return this.write('drop versions', (guard) => dropVersionRows(this.sql, a, version, guard));
  }

  /** VACUUM takes as long as the tables need; no deadline. */
  compact(): Promise<CompactionResult> {
    return this.run('compact', () => vacuumTables(this.sql), 0);
  }

  /**
   * Whether the database answers and still holds every table and column this server found once
   * migrated: one catalog read on the probe's connection. A table or column gone (dropped or
   * renamed under the running server) fails it with SchemaMismatchError, naming what is gone,
   * so /ready turns red until it is back, as every request needing it fails meanwhile.
   */
  ping(): Promise<void> {
    return this.run('ping', async () => {
      const gone = await this.schema.missing(this.probe);
      if (gone.length > 0) {
        throw new SchemaMismatchError(
          `the database schema lacks ${gone.join(', ')}, which this release needs: dropped or renamed since this server started (by hand, ` +
            'a restore without it, a newer release\u2019s migration); restore the database from a backup, or rename it back',
        );
      }
    });
  }

  /** Records the embedder's dimension and builds its HNSW index (see vectors.ts). */
  prepareEmbeddings(dimension: number): Promise<void> {
    if (!this.vectors) return Promise.reject(new Error('vector search is disabled: pgvector is not installed'));
    return this.run('prepare embeddings', () => prepareEmbeddings(this.sql, dimension, SCHEMA_LOCK), 0);
  }

  /**
   * Lets the operations already running finish (each is bounded by the deadline), then drops
   * the connections at once. Waiting for our own work rather than the driver's graceful end
   * matters when the database is down: the driver then waits out its whole timeout for a
   * query whose socket died.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await Promise.allSettled(this.running);
      const draining = this.feed.close();
      await this.sql.end({ timeout: 0 });
      await this.probe.end({ timeout: 0 });
      await draining;
    })();
    return this.closing;
  }

  getRecord(collection: string, id: string): Promise<StoredRecord | null> {
    return this.run('getRecord', () => this.recordOps.get(collection, id));
  }

  createRecord(collection: string, id: string, data: Record<string, unknown>): Promise<boolean> {
    return this.run('createRecord', () => this.recordOps.create(collection, id, data));
  }

  putRecord(collection: string, id: string, data: Record<string, unknown>): Promise<void> {
    return this.run('putRecord', () => records.putRecord(this.sql, collection, id, data));
  }

  replaceRecord(collection: string, id: string, expected: Record<string, unknown>, data: Record<string, unknown>): Promise<boolean> {
    return this.run('replaceRecord', () => records.replaceRecord(this.sql, collection, id, expected, data));
  }

  deleteRecord(collection: string, id: string): Promise<boolean> {
    return this.run('deleteRecord', () => this.recordOps.delete(collection, id));
  }

  listRecords(collection: string, query: RecordListQuery): Promise<StoredRecord[]> {
    return this.run('listRecords', () => records.listRecords(this.sql, collection, query));
  }

  /**
   * Runs one operation under the deadline and turns failures into the port's errors. Within a
   * write's turn (domain/turns.ts), a read gets what is left of the write's time.
   */
  private async run<T>(operation: string, work: () => Promise<T>, timeoutMs = this.timeoutMs): Promise<T> {
    if (this.closing) throw unavailable('the store is closed');
    const left = timeoutMs > 0 ? Math.min(timeoutMs, (turnDeadline() ?? Infinity) - performance.now()) : 0;
    if (timeoutMs > 0 && left <= 0) throw unavailable(`the database did not answer in time (${operation})`);
    return this.settle(operation, timeoutMs > 0 ? withDeadline(work(), left, operation) : work());
  }

  /**
   * Runs one write under its deadline (deadline.ts, guardedWrite): answered by what the database
   * did, so a write answered UNAVAILABLE stored nothing and one stored is not answered so, save
   * when the connection fails mid-commit. The deadline starts at the write's place in line
   * (turnDeadline) when it has one, else now.
   */
  private write<T>(operation: string, work: (guard: WriteGuard | undefined) => Promise<T>): Promise<T> {
    if (this.closing) return Promise.reject(unavailable('the store is closed'));
    if (this.timeoutMs <= 0) return this.settle(operation, work(undefined));
    const deadline = Math.min(performance.now() + this.timeoutMs, turnDeadline() ?? Infinity);
    const running = guardedWrite(work, {
      deadline,
      margin: cancelMargin(this.timeoutMs),
      what: operation,
      onUnknown: () => this.logger.warn({ operation }, 'postgres write unanswered even after its cancel; its outcome is unknown'),
    });
    return this.settle(operation, running);
  }

  private async settle<T>(operation: string, running: Promise<T>): Promise<T> {
    this.running.add(running);
    try {
      return await running;
    } catch (error) {
      // Conflicts are the port's own answer; a wrong dimension is the caller's configuration.
      if (error instanceof VersionConflict || error instanceof EmbeddingDimensionError) throw error;
      // Damage and a schema this release cannot use leave as themselves (db-errors.ts storeError).
      throw storeError(error, operation, this.logger);
    } finally {
      this.running.delete(running);
    }
  }
}
