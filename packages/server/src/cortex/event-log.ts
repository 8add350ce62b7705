import type { Logger } from 'pino';
import type { RecordStore } from '../ports/records.ts';
import { COLLECTIONS, type CortexEvent } from './cortex-records.ts';

/** Stream events are kept this long: enough for every replica's poll to see them. */
export const LOG_KEEP_MS = 10 * 60_000;
const TIME_DIGITS = 15;

/** Log ids sort by the time they were written, then by writer and sequence. */
export const logIdAt = (ms: number): string => String(Math.max(0, Math.floor(ms))).padStart(TIME_DIGITS, '0');
export const logTimeOf = (id: string): number => Number(id.slice(0, TIME_DIGITS));

/** Events written at once, at most (on PostgreSQL, concurrent creates share statements: record-ops.ts). */
const APPEND_BATCH = 64;

/**
 * The active worker's compile events as shared records (`cortex/<ns>/log`), so that the
 * cortex stream of every replica — not only the worker's own process — can follow them.
 * Appends never block a compile: events that come while a batch is being written wait and go
 * together in the next one (one wait for all of them, not one each: a catch-up publishes
 * thousands). A failed append is logged and dropped (the digest itself is already stored;
 * only the live notice is lost).
 */
export class EventLog {
  private readonly records: RecordStore;
  private readonly writer: string;
  private readonly logger: Logger;
  private seq = 0;
  private lastAt = 0;
  private queue: Array<{ event: CortexEvent; seq: string }> = [];
  private writing: Promise<void> | null = null;

  constructor(records: RecordStore, writer: string, logger: Logger) {
    this.records = records;
    this.writer = writer;
    this.logger = logger;
  }

  append(event: CortexEvent): void {
    this.queue.push({ event, seq: String(++this.seq).padStart(9, '0') });
    this.writing ??= this.write();
  }

  /** Resolves once every event appended so far (and any appended meanwhile) is written or dropped. */
  flush(): Promise<void> {
    return this.writing ?? Promise.resolve();
  }

  private async write(): Promise<void> {
    // Events appended in the same turn go in the first batch.
    await Promise.resolve();
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, APPEND_BATCH);
        // Stamped when written, not when queued: other replicas' streams look back only a
        // moment (cortex-feed.ts), so an event queued behind a slow append, stamped then,
        // landed older than their window and was never streamed. Batches are written one
        // after another and stamped no earlier than the last, and the sequence orders a
        // batch, so the ids still sort in the order the events came.
        this.lastAt = Math.max(this.lastAt, Date.now());
        const at = logIdAt(this.lastAt);
        await Promise.all(
          batch.map(async ({ event, seq }) => {
            try {
              await this.records.createRecord(COLLECTIONS.log(event.namespace), `${at}-${this.writer}-${seq}`, { ...event });
            } catch (error) {
              this.logger.warn({ err: error }, 'cortex: could not append to the stream log');
            }
          }),
        );
      }
    } finally {
      this.writing = null;
    }
  }

  /** Delete events older than LOG_KEEP_MS, a bounded number per call. */
  async trim(namespace: string, now: number, max = 2000): Promise<void> {
    const collection = COLLECTIONS.log(namespace);
    let removed = 0;
    while (removed < max) {
      const page = await this.records.listRecords(collection, { limit: 200 });
      const old = page.filter((r) => now - logTimeOf(r.id) > LOG_KEEP_MS);
      for (const r of old) await this.records.deleteRecord(collection, r.id);
      removed += old.length;
      if (old.length < page.length || page.length < 200) return;
    }
  }
}
