import type { Logger } from 'pino';
import type { RecordStore } from '../ports/records.ts';
import { COLLECTIONS, type CortexEvent } from './cortex-records.ts';

/** Stream events are kept this long: enough for every replica's poll to see them. */
export const LOG_KEEP_MS = 10 * 60_000;
const TIME_DIGITS = 15;

/** Log ids sort by the time they were written, then by writer and sequence. */
export const logIdAt = (ms: number): string => String(Math.max(0, Math.floor(ms))).padStart(TIME_DIGITS, '0');
export const logTimeOf = (id: string): number => Number(id.slice(0, TIME_DIGITS));

/**
 * The active worker's compile events as shared records (`cortex/<ns>/log`), so that the
 * cortex stream of every replica — not only the worker's own process — can follow them.
 * Appends are chained to keep their order and never block a compile; a failed append is
 * logged and dropped (the digest itself is already stored; only the live notice is lost).
 */
export class EventLog {
  private readonly records: RecordStore;
  private readonly writer: string;
  private readonly logger: Logger;
  private seq = 0;
  private chain: Promise<void> = Promise.resolve();

  constructor(records: RecordStore, writer: string, logger: Logger) {
    this.records = records;
    this.writer = writer;
    this.logger = logger;
  }

  append(event: CortexEvent): void {
    const seq = String(++this.seq).padStart(9, '0');
    this.chain = this.chain.then(async () => {
      // Stamped when written, not when queued: other replicas' streams look back only a
      // moment (cortex-feed.ts), so an event queued behind a slow append, stamped then, landed
      // older than their window and was never streamed. Appends run one after another, so the
      // ids still sort in the order the events came.
      const id = `${logIdAt(Date.now())}-${this.writer}-${seq}`;
      try {
        await this.records.createRecord(COLLECTIONS.log(event.namespace), id, { ...event });
      } catch (error) {
        this.logger.warn({ err: error }, 'cortex: could not append to the stream log');
      }
    });
  }

  flush(): Promise<void> {
    return this.chain;
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
