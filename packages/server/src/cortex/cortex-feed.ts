import type { Logger } from 'pino';
import type { RecordStore } from '../ports/records.ts';
import { COLLECTIONS, type CortexEvent } from './cortex-records.ts';
import { logIdAt, logTimeOf } from './event-log.ts';

export type CortexListener = (event: CortexEvent, id: string) => void;

/** Log records can become visible a little out of id order (commit and put latency). */
const LOOKBACK_MS = 1500;

/**
 * Compile events for /api/v1/cortex/stream in one replica. On a shared backend the active
 * worker may run in any process, so this follows its event log (polled while someone
 * listens); on the filesystem the worker is in this process and publishes here directly.
 */
export class CortexFeed {
  private readonly records: RecordStore;
  private readonly poll: boolean;
  private readonly pollMs: number;
  private readonly logger: Logger;
  private readonly listeners = new Map<string, Set<CortexListener>>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private localSeq = 0;

  constructor(records: RecordStore, options: { poll: boolean; logger: Logger; pollMs?: number }) {
    this.records = records;
    this.poll = options.poll;
    this.pollMs = options.pollMs ?? 500;
    this.logger = options.logger;
  }

  publishLocal(event: CortexEvent): void {
    this.emit(event.namespace, event, `${logIdAt(Date.now())}-local-${String(++this.localSeq).padStart(9, '0')}`);
  }

  subscribe(namespace: string, listener: CortexListener): () => void {
    const set = this.listeners.get(namespace) ?? new Set();
    set.add(listener);
    this.listeners.set(namespace, set);
    if (this.poll && !this.timers.has(namespace)) this.follow(namespace);
    return () => {
      set.delete(listener);
      if (set.size > 0) return;
      this.listeners.delete(namespace);
      clearTimeout(this.timers.get(namespace));
      this.timers.delete(namespace);
    };
  }

  close(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.listeners.clear();
  }

  private emit(namespace: string, event: CortexEvent, id: string): void {
    for (const listener of this.listeners.get(namespace) ?? []) listener(event, id);
  }

  private follow(namespace: string): void {
    const seen = new Set<string>();
    const collection = COLLECTIONS.log(namespace);
    let since = Date.now();
    const step = async (): Promise<void> => {
      const started = Date.now();
      try {
        // Re-read a short window each time: a record may become visible after later ids did.
        let after = logIdAt(since - LOOKBACK_MS);
        for (;;) {
          const page = await this.records.listRecords(collection, { after, limit: 200 });
          for (const r of page) {
            if (seen.has(r.id)) continue;
            seen.add(r.id);
            this.emit(namespace, r.data as unknown as CortexEvent, r.id);
          }
          const last = page.at(-1);
          if (page.length < 200 || !last) break;
          after = last.id;
        }
        since = started;
        // Ids older than the window can never be listed again; forget them.
        for (const id of seen) if (logTimeOf(id) < since - 2 * LOOKBACK_MS) seen.delete(id);
      } catch (error) {
        this.logger.debug({ err: error }, 'cortex stream: cannot read the event log; retrying');
      }
      if (this.listeners.has(namespace)) this.timers.set(namespace, setTimeout(() => void step(), this.pollMs));
    };
    this.timers.set(namespace, setTimeout(() => void step(), 0));
  }
}
