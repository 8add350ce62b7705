import type { Logger } from 'pino';
import type { CollectionStats } from '../../search-rules/bm25.ts';
import type { Sql } from './client.ts';

/** Below this many rows a stale refresh is cheap enough to wait for inside a search. */
const WAIT_BELOW_ROWS = 20_000;
/**
 * Rows changed since the last read are read again in the background at most this long after
 * it, however few they are: a tenth of a million rows may take days to change, and until then
 * a word new to the store counts as rare however many entries hold it...
 */
const STALE_AFTER_MS = 5 * 60_000;
/** ...or this many times as long as the last read took, whichever is later (a read spends at most a fiftieth of a database core). */
const STALE_AFTER_READS = 50;

/**
 * Document frequencies for BM25 on PostgreSQL, read with ts_stat over the search rows and
 * kept in memory. ts_rank has no idea of how rare a word is; BM25 does, and computing it in
 * the application with these figures ranks exactly as the in-process index does. Refreshed
 * when a tenth of the rows have changed since the last read, or in the background when any
 * have and the last read is STALE_AFTER_MS old; terms written since count as rare, which errs
 * towards showing new entries.
 */
export class SearchStats implements CollectionStats {
  docCount = 0;
  averageLength = 1;
  private df = new Map<string, number>();
  private changes = 0;
  /** Changes since the row count was last read (the count feeds /metrics). */
  private uncounted = 0;
  private timer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | null = null;
  /** performance.now() when the last read ended, and how long it took. */
  private readAt = 0;
  private readMs = 0;
  private readonly sql: Sql;
  private readonly logger: Logger;
  private readonly staleAfterMs: number;

  constructor(sql: Sql, logger: Logger, { staleAfterMs = STALE_AFTER_MS } = {}) {
    this.sql = sql;
    this.logger = logger;
    this.staleAfterMs = staleAfterMs;
  }

  docFrequency(term: string): number {
    return this.df.get(term) ?? 1;
  }

  /** Whether the statistics as read list `term` (held by two rows or more then). */
  lists(term: string): boolean {
    return this.df.has(term);
  }

  /** Counts rows written or removed (by any replica: the change feed reports them all). */
  noteChanges(n: number): void {
    this.changes += n;
    this.uncounted += n;
  }

  /**
   * Keeps the row count current for /metrics (a count every few seconds while rows change), and
   * reads the statistics again once rows changed since the last read are old enough (STALE_AFTER_MS).
   */
  startCounting(everyMs = 5_000): void {
    this.timer = setInterval(() => {
      const sinceRead = performance.now() - this.readAt;
      if (this.changes > 0 && this.refreshing === null && sinceRead >= Math.max(this.staleAfterMs, this.readMs * STALE_AFTER_READS)) {
        this.refresh().catch((error: unknown) => this.logger.warn({ err: error }, 'reading search statistics failed'));
      }
      if (this.uncounted === 0) return;
      this.uncounted = 0;
      this.sql<{ n: string }[]>`select count(*) as n from cairn_search`
        .then(([row]) => {
          this.docCount = Number(row?.n ?? this.docCount);
        })
        .catch(() => {});
    }, everyMs).unref();
  }

  close(): void {
    clearInterval(this.timer);
  }

  /** Refresh if stale: waits when the table is small, else refreshes in the background. */
  async current(): Promise<void> {
    if (this.changes === 0 || this.changes < this.docCount / 10) return;
    const refresh = this.refresh();
    if (this.docCount < WAIT_BELOW_ROWS) await refresh;
    else refresh.catch(() => {});
  }

  refresh(): Promise<void> {
    this.refreshing ??= (async () => {
      const changes = this.changes;
      const started = performance.now();
      try {
        const [totals] = await this.sql<{ n: string; avg: number | null }[]>`select count(*) as n, avg(doc_length)::float8 as avg from cairn_search`;
        // Terms in one row only are left out (they are the default): most of a vocabulary.
        const rows = await this.sql<{ word: string; ndoc: number }[]>`
          select word, ndoc from ts_stat('select terms from cairn_search') where ndoc > 1`;
        this.docCount = Number(totals?.n ?? 0);
        this.averageLength = totals?.avg ?? 1;
        this.df = new Map(rows.map((r) => [r.word, r.ndoc]));
        this.changes -= changes;
        this.readMs = performance.now() - started;
        this.logger.debug({ rows: this.docCount, terms: this.df.size, ms: Math.round(this.readMs) }, 'search statistics refreshed');
      } finally {
        this.readAt = performance.now();
        this.refreshing = null;
      }
    })();
    return this.refreshing;
  }
}
