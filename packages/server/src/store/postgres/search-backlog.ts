import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { schemaMismatch } from './db-errors.ts';
import type { Embedder } from '../../ports/embedder.ts';
import { embeddingText } from '../../search-rules/entry-text.ts';
import type { Sql } from './client.ts';
import { readVersions } from './search-rows.ts';
import { embedderLiteral, recordedEmbedder, vectorLiteral } from './search-vectors.ts';

const PROGRESS_EVERY_MS = 5_000;

/** A failure the same texts meet again however often sent (embed/openai-embedder.ts marks it `refused`). */
const isRefusal = (error: unknown): boolean => (error as { refused?: unknown } | null)?.refused === true;
/** How long the endpoint asked to be left alone (Retry-After), in ms; 0 when it did not say. */
const retryAfterOf = (error: unknown): number => {
  const ms = (error as { retryAfterMs?: unknown } | null)?.retryAfterMs;
  return typeof ms === 'number' && Number.isFinite(ms) ? ms : 0;
};

/**
 * The `embedder` a row gets when this embedder refuses its text alone (a 4xx such as TEI's 413,
 * or numbers that are not finite): the backlog passes it by, rather than claim it again for
 * ever ahead of every later row. Another embedder's id differs, so changing the embedder tries
 * the row again; a new version of other text gets a row without it.
 */
export const refusedBy = (embedderId: string): string => `${embedderId}:refused`;
const IDLE_POLL_MS = 5_000;
/** How soon a pass looks again at rows it counted that another transaction holds. */
const HELD_POLL_MS = 500;
const MAX_BACKOFF_MS = 30_000;

/**
 * Gives every search row a vector from the current embedder: rows written by a remote
 * embedder's server (which never waits for the endpoint), every row after the embedder
 * changed, and, at start, rows whose indexing a crash cut short. Rows are claimed with SKIP LOCKED, so replicas share the work; progress goes to
 * the log every few seconds and to /metrics (pending). An unreachable endpoint is retried with
 * backoff; text search serves those rows meanwhile.
 */
export class EmbeddingBacklog {
  /**
   * Rows waiting for this embedder's vector. Unknown until the first count, and then at least
   * one: at 0 from the start, /metrics said "caught up" in the moment between a start with a
   * new embedder and that count, while every row still held the old embedder's vector.
   */
  pending = 1;
  private readonly sql: Sql;
  private readonly embedder: Embedder;
  private readonly logger: Logger;
  private readonly ensureIndex: (dimension: number) => Promise<void>;
  private wake: (() => void) | null = null;
  /**
   * Rows were written without a vector since the last count. Set by `nudge` whatever the loop
   * is doing: a nudge that came during a pass used to be lost (no one was waiting), and the
   * rows it announced waited for the next poll, seconds, while `pending` said 0.
   */
  private nudged = false;
  private closed = false;
  /** Rows whose text this process found refused alone, and marked (cairn_search_unembeddable_total). */
  unembeddable = 0;
  /**
   * Rows marked refused by this embedder, by any server and at any time (a restart does not ask
   * again): they have no vector, so "embedded" leaves them out, as the in-process index does.
   * Read with each count of the stale rows, and raised as this process marks rows.
   */
  refused = 0;
  /**
   * The embedder another server of this database recorded since this one recorded its own
   * (cairn_search_embedder_conflict): each re-embeds the other's entries with its own, for ever.
   */
  conflict: string | null = null;
  /** Whether this server's embedder is recorded as the store's (its vector index prepared). */
  recordedOurs: () => boolean = () => false;

  constructor(sql: Sql, embedder: Embedder, logger: Logger, ensureIndex: (dimension: number) => Promise<void>) {
    this.sql = sql;
    this.embedder = embedder;
    this.logger = logger;
    this.ensureIndex = ensureIndex;
  }

  start(): void {
    void this.loop();
  }

  /** Rows were written without a vector: at least one is pending until the next count says how many. */
  nudge(): void {
    this.nudged = true;
    this.pending = Math.max(this.pending, 1);
    this.wake?.();
  }

  close(): void {
    this.closed = true;
    this.nudge();
  }

  /** The embedder's dimension (asking it once when remote), with its vector index in place. */
  private async dimension(): Promise<number> {
    const dimension = this.embedder.dimension ?? (await this.embedder.embed(['dimension probe']))[0]?.length ?? 0;
    await this.ensureIndex(dimension);
    return dimension;
  }

  /**
   * One vector per text, or null for a text the embedder refuses alone. A batch refused whole
   * (one text in it is too long for the model, say) is sent again a text at a time, so that
   * one text never holds every later one. Any other failure rejects (the pass is retried).
   */
  private async embedRows(texts: string[], dimension: number): Promise<(Float32Array | null)[]> {
    const embed = async (some: string[]): Promise<Float32Array[]> => {
      const vectors = await (this.embedder.embedInBackground?.(some) ?? this.embedder.embed(some));
      if (vectors.length !== some.length) throw new Error(`the embedder answered ${vectors.length} vectors for ${some.length} texts`);
      if (vectors.some((v) => v.length !== dimension)) throw new Error(`the embedder answered ${vectors.find((v) => v.length !== dimension)?.length} dimensions, expected ${dimension}`);
      // PostgreSQL refuses them ("infinite value not allowed in vector"), and the pass with them.
      if (vectors.some((v) => v.some((x) => !Number.isFinite(x)))) throw Object.assign(new Error('the embedder answered numbers that are not finite'), { refused: true });
      return vectors;
    };
    try {
      return await embed(texts);
    } catch (error) {
      if (!isRefusal(error)) throw error;
      if (texts.length === 1) return [null];
      this.logger.warn({ err: error, texts: texts.length }, 'the embedder refused a batch; sending its texts one at a time');
    }
    const out: (Float32Array | null)[] = [];
    for (const text of texts) {
      try {
        out.push((await embed([text]))[0] as Float32Array);
      } catch (error) {
        if (!isRefusal(error)) throw error;
        this.logger.warn({ err: error, embedder: this.embedder.id }, 'the embedder refused a text');
        out.push(null);
      }
    }
    return out;
  }

  /**
   * Replicas started with different embedders fight: each records its own at start and
   * re-embeds every row the other embedded. Not stopped here (which one is right is the
   * operator's call), but said: a warning naming both, once, and /metrics.
   */
  private async checkPeers(): Promise<void> {
    if (!this.recordedOurs()) return;
    const recorded = await recordedEmbedder(this.sql);
    const other = recorded && recorded.id !== this.embedder.id ? recorded.id : null;
    if (other && other !== this.conflict) {
      this.logger.warn({ embedder: this.embedder.id, other }, 'another server of this database embeds with another embedder: each re-embeds the other\u2019s entries; give every server the same embedder settings');
    }
    this.conflict = other;
  }

  /** Rows without this embedder's vector (and, kept in `refused`, the rows it refuses). */
  private async countStale(stale: string): Promise<number> {
    const [count] = await this.sql.unsafe<{ n: string; refused: string }[]>(
      `select count(*) filter (where ${stale}) as n, count(*) filter (where embedder = ${embedderLiteral(refusedBy(this.embedder.id))}) as refused from cairn_search`,
    );
    this.refused = Number(count?.refused ?? 0);
    return Number(count?.n ?? 0);
  }

  private async loop(): Promise<void> {
    const id = embedderLiteral(this.embedder.id);
    const stale = `(embedder is null or (embedder <> ${id} and embedder <> ${embedderLiteral(refusedBy(this.embedder.id))}))`;
    let backoff = 500;
    let first = true;
    while (!this.closed) {
      // A pass for rows just written (a nudge) is routine: only its progress past a few seconds is logged.
      const routine = this.nudged && !first;
      await this.checkPeers().catch(() => {});
      // A remote model's dimension, asked once at start: if it answers another than its rows'
      // vectors (the model behind the name changed), those rows become stale here and are
      // counted below. An endpoint that is down is asked again when rows are pending.
      if (first && !this.embedder.local && this.embedder.dimension === undefined) {
        await this.dimension().catch((error: unknown) => this.logger.warn({ err: error }, 'the embedding model could not be asked its dimension; retrying when entries are pending'));
      }
      first = false;
      try {
        // Cleared before counting: a row announced from here on is either counted or nudges again.
        this.nudged = false;
        this.pending = await this.countStale(stale);
        const total = this.pending;
        // The index must exist before rows are claimed: building it takes a lock that the
        // claiming transaction would otherwise wait on while holding its own.
        const dimension = total > 0 ? await this.dimension() : 0;
        let done = 0;
        let reported = performance.now();
        if (total > 0 && !routine) this.logger.info({ embedder: this.embedder.id, done, total, pct: 0 }, 'embedding entries');
        while (this.pending > 0 && !this.closed) {
          const claimed = await this.sql.begin(async (tx) => {
            const rows = await tx.unsafe<{ namespace: string; entity_path: string; key: string; version: number }[]>(
              `select namespace, entity_path, key, version from cairn_search where ${stale} limit 64 for update skip locked`,
            );
            if (rows.length === 0) return 0;
            const entries = await readVersions(tx, rows);
            const texts = entries.map((e) => embeddingText(e));
            const vectors = await this.embedRows(texts, dimension);
            const refused = entries.filter((_, i) => vectors[i] === null);
            const json = JSON.stringify(entries.flatMap((e, i) => {
              const v = vectors[i];
              return v ? [{ namespace: e.namespace, entity_path: e.entity_path, key: e.key, version: e.version, embedding: vectorLiteral(v) }] : [];
            }));
            await tx.unsafe(
              `update cairn_search s set embedding = r.embedding::vector, embedder = ${id}
                 from json_to_recordset($1::text::json) as r(namespace text, entity_path text, key text, version int, embedding text)
                where s.namespace = r.namespace and s.entity_path = r.entity_path and s.key = r.key and s.version = r.version`,
              [json],
            );
            if (refused.length > 0) {
              await tx.unsafe(
                `update cairn_search s set embedding = null, embedder = ${embedderLiteral(refusedBy(this.embedder.id))}
                   from json_to_recordset($1::text::json) as r(namespace text, entity_path text, key text, version int)
                  where s.namespace = r.namespace and s.entity_path = r.entity_path and s.key = r.key and s.version = r.version`,
                [JSON.stringify(refused.map((e) => ({ namespace: e.namespace, entity_path: e.entity_path, key: e.key, version: e.version })))],
              );
              this.unembeddable += refused.length;
              this.refused += refused.length;
              for (const e of refused) {
                this.logger.warn({ embedder: this.embedder.id, namespace: e.namespace, entity_path: e.entity_path, key: e.key, version: e.version }, 'the embedder refuses this entry\u2019s text: text search alone finds it');
              }
            }
            return rows.length;
          });
          if (claimed === 0) {
            // Every row still counted is held by another transaction (another replica's pass,
            // or the indexer's, which gives a local embedder's rows their vectors as it writes
            // them), or has its vector by now. Count again: the count is what /metrics says,
            // and a pass that left its first count standing said "pending" for rows long
            // embedded, until the next write's nudge (never, on an idle server).
            const waiting = await this.countStale(stale);
            this.pending = Math.max(this.nudged ? 1 : 0, waiting);
            if (waiting === 0) break;
            await sleep(HELD_POLL_MS, undefined, { ref: false });
            continue;
          }
          done += claimed;
          // Rows announced during the pass are not in `total`: while one may wait, say so (the
          // count that follows the pass says how many).
          this.pending = Math.max(this.nudged ? 1 : 0, total - done);
          backoff = 500;
          if (performance.now() - reported >= PROGRESS_EVERY_MS) {
            reported = performance.now();
            this.logger.info({ embedder: this.embedder.id, done, total, pct: Math.floor((100 * done) / Math.max(1, total)) }, 'embedding entries');
          }
        }
        if (total > 0 && done > 0 && !routine) this.logger.info({ embedder: this.embedder.id, done }, 'embedding caught up');
      } catch (error) {
        const wait = Math.min(MAX_BACKOFF_MS, Math.max(backoff, retryAfterOf(error)));
        this.logger.warn({ err: schemaMismatch(error, 'embedding') ?? error, retry_ms: wait }, 'embedding failed; text search still serves these entries, retrying');
        await sleep(wait, undefined, { ref: false });
        backoff = Math.min(MAX_BACKOFF_MS, backoff * 2);
        continue;
      }
      if (this.nudged && !this.closed) continue;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        // A remote embedder's rows are left to this loop by every server, so it looks again on
        // its own. A local embedder's vectors come with indexing (search-indexer.ts), which
        // nudges this loop for the rows it could not embed; polling as well would embed the
        // rows an append has just written a second time, racing the indexer for them.
        if (!this.embedder.local) setTimeout(resolve, IDLE_POLL_MS).unref();
      });
      this.wake = null;
    }
  }
}
