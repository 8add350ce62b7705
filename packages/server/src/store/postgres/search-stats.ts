import type { Logger } from 'pino';
import type { CollectionStats } from '../../search-rules/bm25.ts';
import type { Sql } from './client.ts';

/** Below this many rows a stale refresh is cheap enough to wait for inside a search. */
const WAIT_BELOW_ROWS = 20_000;

/**
 * Document frequencies for BM25 on PostgreSQL, read with ts_stat over the search rows and
 * kept in memory. ts_rank has no idea of how rare a word is; BM25 does, and computing it in
 * the application with these figures ranks exactly as the in-process index does. Refreshed
 * when a tenth of the rows have changed since the last read; terms written since count as
 * rare, which errs towards showing new entries.
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
  private readonly sql: Sql;
  private readonly logger: Logger;

  constructor(sql: Sql, logger: Logger) {
    this.sql = sql;
    this.logger = logger;
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

  /** Keeps the row count current for /metrics: a count every few seconds while rows change. */
  startCounting(everyMs = 5_000): void {
    this.timer = setInterval(() => {
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
        this.logger.debug({ rows: this.docCount, terms: this.df.size, ms: Math.round(performance.now() - started) }, 'search statistics refreshed');
      } finally {
        this.refreshing = null;
      }
    })();
    return this.refreshing;
  }
}
