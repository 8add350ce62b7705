import type { Logger } from 'pino';
import type { Entry } from '../../domain/entry.ts';
import type { CollectionStats } from '../../search-rules/bm25.ts';
import type { Sql } from './client.ts';
import { termsOf } from './search-terms.ts';

/**
 * Below this many rows a read is cheap enough to wait for, inside a search (a stale refresh)
 * or at start-up (the first read): ts_stat takes ~34 µs a row, so at most ~0.7 s.
 */
export const WAIT_BELOW_ROWS = 20_000;
/**
 * Rows changed since the last read are read again in the background at most this long after
 * it, however few they are: a tenth of a million rows may take days to change, and until then
 * a word new to the store counts as rare however many entries hold it...
 */
const STALE_AFTER_MS = 5 * 60_000;
/** ...or this many times as long as the last read took, whichever is later (a read spends at most a fiftieth of a database core). */
const STALE_AFTER_READS = 50;

/** One namespace's statistics as read: its rows, their average length, and its terms held by two rows or more. */
interface Space {
  docs: number;
  average: number;
  df: Map<string, number>;
}

/** The statistics BM25 reads for one namespace's search, and whether they list a term. */
export interface NamespaceStats extends CollectionStats {
  lists(term: string): boolean;
}

const NO_SPACE: Space = { docs: 0, average: 1, df: new Map() };

/** One namespace's rows announced since the last read began: created rows less deleted ones, and the created rows' terms. */
interface Recent {
  docs: number;
  df: Map<string, number>;
}

/** Adds `more` to a namespace's counts in `recent`. */
const addRecent = (recent: Map<string, Recent>, namespace: string, more: Recent): void => {
  const into = recent.get(namespace);
  if (!into) {
    recent.set(namespace, more);
    return;
  }
  into.docs += more.docs;
  for (const [term, n] of more.df) into.df.set(term, (into.df.get(term) ?? 0) + n);
};

/**
 * Document frequencies for BM25 on PostgreSQL, read with ts_stat over the search rows and
 * kept in memory. ts_rank has no idea of how rare a word is; BM25 does, and computing it in
 * the application with these figures ranks exactly as the in-process index does. Refreshed
 * when a tenth of the rows have changed since the last read, or in the background when any
 * have and the last read is STALE_AFTER_MS old. Between reads, the entries the change feed
 * announces (every replica's) are counted in (`noteEntry`), so that a word new to the store
 * does not count as rare however many entries hold it until the next read.
 *
 * The first read (`open`) is waited for at start-up only below WAIT_BELOW_ROWS rows, so a
 * large store listens at once (a million rows take ~30 s to read). Until that read lands,
 * searches do not wait for it: their scores count every word as rare (no statistics yet),
 * vector searches try the small namespaces' exact scan first, and spelling corrections find no
 * word listed; then they rank as before. The row count (status, /metrics) is read first.
 *
 * Each namespace has its own (`of`): a key confined to one namespace read in its scores how
 * many rows of every other held its words. While the table holds one namespace they are read
 * as before, with one ts_stat over the whole table; with several, one ts_stat per namespace.
 */
export class SearchStats implements CollectionStats {
  /** Rows of every namespace (for /metrics and status), and their average length. */
  docCount = 0;
  averageLength = 1;
  private spaces = new Map<string, Space>();
  private recent = new Map<string, Recent>();
  private changes = 0;
  /** Changes since the row count was last read (the count feeds /metrics). */
  private uncounted = 0;
  private timer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | null = null;
  /** Whether a read has ever completed: until then, searches do not wait for the one under way. */
  private read = false;
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

  /** A namespace's statistics, as last read (none: no row then). */
  of(namespace: string): NamespaceStats {
    const space = this.spaces.get(namespace) ?? NO_SPACE;
    const recent = this.recent.get(namespace);
    const since = (term: string): number => recent?.df.get(term) ?? 0;
    return {
      docCount: Math.max(0, space.docs + (recent?.docs ?? 0)),
      averageLength: space.average,
      docFrequency: (term) => (space.df.get(term) ?? 0) + since(term) || 1,
      lists: (term) => (space.df.get(term) ?? 0) + since(term) >= 2,
    };
  }

  /** Rows of any namespace holding `term`, by each namespace's figures (1 when none lists it). */
  docFrequency(term: string): number {
    let df = 0;
    for (const space of this.spaces.values()) df += space.df.get(term) ?? 0;
    for (const recent of this.recent.values()) df += recent.df.get(term) ?? 0;
    return df || 1;
  }

  /** Whether the statistics list `term` (held by two rows or more when read, counting those created since). */
  lists(term: string): boolean {
    return this.docFrequency(term) >= 2;
  }

  /**
   * Counts versions the change feed announced into the figures until the next read: a created
   * entry (version 1) is a row more, holding each of its terms once more; a deletion is a row
   * less. A replacement is not counted (the terms it dropped are not known here), nor is the
   * length of created rows; the next read counts them all. A version announced while a read
   * is under way may be counted twice (in the read and here), which errs towards common.
   */
  noteEntry(entry: Entry): void {
    if (entry.deleted) addRecent(this.recent, entry.namespace, { docs: -1, df: new Map() });
    else if (entry.version === 1) addRecent(this.recent, entry.namespace, { docs: 1, df: new Map([...termsOf(entry)].map((term) => [term, 1])) });
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

  /**
   * The first read, at start-up: waited for when the table holds fewer than WAIT_BELOW_ROWS
   * rows (counted by a scan that stops there, so a large table costs that many rows, not all),
   * else begun in the background, so that a large store's server listens without it. Never
   * throws: a failed read is logged, and the next search tries again.
   */
  async open(): Promise<void> {
    const warn = (error: unknown): void => this.logger.warn({ err: error }, 'reading search statistics failed');
    let small = true;
    try {
      const [row] = await this.sql<{ n: number }[]>`select count(*)::int as n from (select 1 from cairn_search limit ${WAIT_BELOW_ROWS}) s`;
      small = (row?.n ?? 0) < WAIT_BELOW_ROWS;
    } catch (error) {
      warn(error);
    }
    const first = this.refresh().catch(warn);
    if (small) await first;
  }

  /** Refresh if stale: waits when the table is small, else refreshes in the background. */
  async current(): Promise<void> {
    if (!this.read) {
      // The first read of a large table is under way (open): no search waits for it.
      if (this.refreshing) return;
      // It failed: read again, as a stale refresh is read.
      const again = this.refresh();
      if (this.docCount < WAIT_BELOW_ROWS) await again;
      else again.catch(() => {});
      return;
    }
    if (this.changes === 0 || this.changes < this.docCount / 10) return;
    const refresh = this.refresh();
    if (this.docCount < WAIT_BELOW_ROWS) await refresh;
    else refresh.catch(() => {});
  }

  refresh(): Promise<void> {
    this.refreshing ??= (async () => {
      const changes = this.changes;
      // What is announced from now on is counted beside this read's figures.
      const recent = this.recent;
      this.recent = new Map();
      const started = performance.now();
      try {
        const totals = await this.sql<{ namespace: string; n: string; avg: number | null }[]>`
          select namespace, count(*) as n, avg(doc_length)::float8 as avg from cairn_search group by namespace`;
        const docs = totals.reduce((sum, t) => sum + Number(t.n), 0);
        // The row count is known before the terms are: status and /metrics show it at once.
        if (!this.read) this.docCount = docs;
        const spaces = new Map<string, Space>();
        for (const t of totals) {
          // Terms in one row only are left out (they are the default): most of a vocabulary.
          // One namespace: the whole table, read as it always was; else each namespace's rows.
          const rows =
            totals.length === 1
              ? await this.sql<{ word: string; ndoc: number }[]>`select word, ndoc from ts_stat('select terms from cairn_search') where ndoc > 1`
              : await this.sql<{ word: string; ndoc: number }[]>`
                  select word, ndoc from ts_stat(format('select terms from cairn_search where namespace = %L', ${t.namespace}::text)) where ndoc > 1`;
          spaces.set(t.namespace, { docs: Number(t.n), average: t.avg ?? 1, df: new Map(rows.map((r) => [r.word, r.ndoc])) });
        }
        this.docCount = docs;
        this.averageLength = docs > 0 ? totals.reduce((sum, t) => sum + Number(t.n) * (t.avg ?? 0), 0) / docs : 1;
        this.spaces = spaces;
        this.read = true;
        this.changes -= changes;
        this.readMs = performance.now() - started;
        this.logger.debug({ rows: this.docCount, namespaces: spaces.size, ms: Math.round(this.readMs) }, 'search statistics refreshed');
      } catch (error) {
        // The read failed: what was announced before it still counts beside the last figures.
        for (const [namespace, before] of recent) addRecent(this.recent, namespace, before);
        throw error;
      } finally {
        this.readAt = performance.now();
        this.refreshing = null;
      }
    })();
    return this.refreshing;
  }
}
