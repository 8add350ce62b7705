import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Embedder } from '../ports/embedder.ts';
import { yieldTurns } from '../event-loop.ts';

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
    while (this.jobs.length > 0 && !this.closed) {
      const batch = this.jobs.slice(0, batchSize);
      let vectors: Float32Array[];
      try {
        const texts = batch.map((j) => j.text);
        vectors = await (this.embedder.embedInBackground?.(texts) ?? this.embedder.embed(texts));
        if (vectors.length !== batch.length) throw new Error(`embedder answered ${vectors.length} vectors for ${batch.length} texts`);
      } catch (error) {
        // Closing stops the embedder under a batch in flight: nothing to retry or report.
        if (this.closed) break;
        this.failures += 1;
        this.logger.warn({ err: error, pending: this.jobs.length, retry_ms: backoff }, 'embedding failed; text search still serves these entries, retrying');
        await sleep(backoff);
        backoff = Math.min(MAX_BACKOFF_MS, backoff * 2);
        continue;
      }
      backoff = 500;
      this.jobs.splice(0, batch.length);
      this.done += batch.length;
      this.apply(batch.map((j) => j.item), vectors);
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
