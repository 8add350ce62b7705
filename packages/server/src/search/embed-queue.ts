import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Embedder } from '../ports/embedder.ts';
import { yieldTurns } from '../event-loop.ts';

/** A failure the same texts meet again however often sent (the embedder marks it `refused`; embed/openai-embedder.ts). */
const isRefusal = (error: unknown): boolean => (error as { refused?: unknown } | null)?.refused === true;

/** How long the embedder asked to be left alone (Retry-After), in ms; 0 when it did not say. */
const retryAfterOf = (error: unknown): number => {
  const ms = (error as { retryAfterMs?: unknown } | null)?.retryAfterMs;
  return typeof ms === 'number' && Number.isFinite(ms) ? ms : 0;
};

/**
 * One vector per text, all of one length, of finite numbers: what any embedder must answer.
 * Numbers that are not finite are refused as the endpoint's refusal is (the text is then set
 * aside); a wrong count or mixed lengths are a failure to retry.
 */
const checkedVectors = (vectors: Float32Array[], n: number): Float32Array[] => {
  if (!Array.isArray(vectors) || vectors.length !== n) throw new Error(`embedder answered ${Array.isArray(vectors) ? vectors.length : 'no'} vectors for ${n} texts`);
  const dimension = vectors[0]?.length ?? 0;
  for (const v of vectors) {
    if (!(v instanceof Float32Array) || v.length !== dimension || dimension === 0) throw new Error('embedder answered vectors of different sizes');
    for (let i = 0; i < v.length; i++) {
      if (!Number.isFinite(v[i])) throw Object.assign(new Error('embedder answered numbers that are not finite'), { refused: true });
    }
  }
  return vectors;
};

export interface EmbedJob<T> {
  item: T;
  text: string;
}

const PROGRESS_EVERY_MS = 5_000;
const MAX_BACKOFF_MS = 30_000;
/**
 * Texts per batch. A local embedder's batch costs a few milliseconds (64 texts of 1 KiB), and
 * one that runs it on the event loop (no `embedInBackground`) holds requests that long. A
 * remote one only waits, and sends fewer, larger requests.
 */
const LOCAL_BATCH = 64;
const REMOTE_BATCH = 32;

/**
 * Embeds texts in the background, in batches, in arrival order. A failing embedder (a remote
 * endpoint that is down) is retried with backoff and never blocks or fails the writes that
 * queued the work; a long backlog (start-up, a changed embedder) reports its progress in the
 * log every few seconds.
 */
export class EmbedQueue<T> {
  private readonly jobs: EmbedJob<T>[] = [];
  private readonly embedder: Embedder;
  private readonly apply: (items: T[], vectors: Float32Array[]) => void;
  private readonly logger: Logger;
  private running: Promise<void> | null = null;
  private closed = false;
  /** Work done and queued since the backlog began, for progress lines. */
  private done = 0;
  private total = 0;
  failures = 0;
  /** Texts the embedder refused alone (cairn_search_unembeddable_total). */
  unembeddable = 0;

  constructor(embedder: Embedder, apply: (items: T[], vectors: Float32Array[]) => void, logger: Logger) {
    this.embedder = embedder;
    this.apply = apply;
    this.logger = logger;
  }

  get pending(): number {
    return this.jobs.length;
  }

  push(job: EmbedJob<T>): void {
    if (this.closed) return;
    this.jobs.push(job);
    this.total += 1;
    this.running ??= this.run().finally(() => {
      this.running = null;
      this.done = 0;
      this.total = 0;
    });
  }

  /** Resolves when the queue is empty (or closed). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  close(): void {
    this.closed = true;
    this.jobs.length = 0;
  }

  private async run(): Promise<void> {
    // Never embed inside the caller (a write on its way to its answer): start on a later turn,
    // when the writes of this one have answered and queued their texts as one batch.
    await new Promise((resolve) => setImmediate(resolve));
    const batchSize = this.embedder.local ? LOCAL_BATCH : REMOTE_BATCH;
    let backoff = 500;
    let lastReport = performance.now();
    const started = lastReport;
    /** Jobs at the head still to send one at a time: their batch held a text the embedder refuses. */
    let singly = 0;
    while (this.jobs.length > 0 && !this.closed) {
      const batch = this.jobs.slice(0, singly > 0 ? 1 : batchSize);
      let vectors: Float32Array[];
      try {
        const texts = batch.map((j) => j.text);
        vectors = checkedVectors(await (this.embedder.embedInBackground?.(texts) ?? this.embedder.embed(texts)), batch.length);
      } catch (error) {
        // Closing stops the embedder under a batch in flight: nothing to retry or report.
        if (this.closed) break;
        if (isRefusal(error)) {
          if (batch.length > 1) {
            // One of these texts is refused whatever the batch: find it by sending them one by one.
            singly = batch.length;
            this.logger.warn({ err: error, texts: batch.length }, 'the embedder refused a batch; sending its texts one at a time');
            continue;
          }
          // Refused alone: set aside, or it would hold every later text for ever.
          this.jobs.shift();
          singly = Math.max(0, singly - 1);
          this.unembeddable += 1;
          this.logger.warn({ err: error, embedder: this.embedder.id, chars: batch[0]?.text.length }, 'the embedder refuses this entry\u2019s text: text search alone finds it');
          continue;
        }
        this.failures += 1;
        const wait = Math.min(MAX_BACKOFF_MS, Math.max(backoff, retryAfterOf(error)));
        this.logger.warn({ err: error, pending: this.jobs.length, retry_ms: wait }, 'embedding failed; text search still serves these entries, retrying');
        await sleep(wait);
        backoff = Math.min(MAX_BACKOFF_MS, backoff * 2);
        continue;
      }
      backoff = 500;
      singly = Math.max(0, singly - batch.length);
      this.jobs.splice(0, batch.length);
      this.done += batch.length;
      try {
        this.apply(batch.map((j) => j.item), vectors);
      } catch (error) {
        // Never out of the loop: an error escaping it crashed the server, and again at each start.
        this.failures += 1;
        this.logger.error({ err: error, embedder: this.embedder.id, entries: batch.length }, 'applying embeddings failed; these entries are found by text search alone');
      }
      const now = performance.now();
      if (now - lastReport >= PROGRESS_EVERY_MS) {
        lastReport = now;
        this.logger.info({ embedder: this.embedder.id, done: this.done, total: this.total, pct: Math.floor((100 * this.done) / this.total) }, 'embedding entries');
      }
      // Let requests run between batches of a long backlog.
      await yieldTurns();
    }
    if (performance.now() - started >= PROGRESS_EVERY_MS) {
      this.logger.info({ embedder: this.embedder.id, done: this.done, ms: Math.round(performance.now() - started) }, 'embedding caught up');
    }
  }
}
