import type { DeliveryCounts } from 'cairn-memory-client';
import { z } from 'zod';
import type { RecordStore } from '../ports/records.ts';

export type DeliveryOutcome = 'written' | 'unchanged' | 'duplicates' | 'ignored' | 'rejected';

// The counters the connectors API lists: declared once, in the client.
export type { DeliveryCounts };

const EMPTY: DeliveryCounts = { received: 0, written: 0, unchanged: 0, duplicates: 0, ignored: 0, rejected: 0, last_event_at: null };
export const statsCollection = (namespace: string): string => `connector-stats/${namespace}`;
/** Reads and replaces of the totals per flush before its counts wait for the next one. */
const FLUSH_ATTEMPTS = 8;

const Count = z.number().int().min(0);
/** Stored totals as `flush` writes them, which reads add to, a missing one as 0 (import checks archives against it). */
export const DeliveryCountsRecordSchema: z.ZodType<Partial<DeliveryCounts>> = z.looseObject({
  received: Count.optional(),
  written: Count.optional(),
  // Absent from totals stored before the outcome existed: read as 0, as every missing count is.
  unchanged: Count.optional(),
  duplicates: Count.optional(),
  ignored: Count.optional(),
  rejected: Count.optional(),
  last_event_at: z.iso.datetime().nullable().optional(),
});

/**
 * Per-connector delivery counters shared by every replica. Counting happens in memory and is
 * added to the shared record about once a second: a record write per delivery would double
 * the cost of every event, and a flood of forged deliveries must not become a flood of
 * writes. Readers see the shared totals plus this replica's unflushed counts.
 */
export class DeliveryCounters {
  private readonly store: RecordStore;
  private readonly onCount: (connector: string, outcome: DeliveryOutcome) => void;
  private pending = new Map<string, DeliveryCounts>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(store: RecordStore, onCount: (connector: string, outcome: DeliveryOutcome) => void = () => {}, intervalMs = 1000) {
    this.store = store;
    this.onCount = onCount;
    this.timer = setInterval(() => void this.flush(), intervalMs);
    this.timer.unref();
  }

  count(namespace: string, connector: string, outcome: DeliveryOutcome, at: string): void {
    const id = `${namespace}\u0000${connector}`;
    const counts = this.pending.get(id) ?? { ...EMPTY };
    counts.received += 1;
    counts[outcome] += 1;
    if (outcome !== 'rejected') counts.last_event_at = at;
    this.pending.set(id, counts);
    this.onCount(connector, outcome);
  }

  /**
   * Shared totals plus this replica's unflushed counts. Reads take turns with flushes: a read
   * overlapping a flush would see the batch in neither place (moved out of `pending`, not yet
   * in the record) or in both, and show a count that goes back or jumps.
   */
  read(namespace: string, connector: string): Promise<DeliveryCounts> {
    const run = this.flushing.then(async () => {
      const stored = await this.store.getRecord(statsCollection(namespace), connector);
      return add({ ...EMPTY, ...(stored?.data as Partial<DeliveryCounts> | undefined) }, this.pending.get(`${namespace}\u0000${connector}`));
    });
    this.flushing = run.then(() => undefined, () => undefined);
    return run;
  }

  /** Add this replica's counts to the shared totals (see addTo). */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      const batch = this.pending;
      this.pending = new Map();
      for (const [id, delta] of batch) {
        const [namespace, connector] = id.split('\u0000') as [string, string];
        try {
          if (!(await this.addTo(statsCollection(namespace), connector, delta))) this.pending.set(id, add(this.pending.get(id) ?? { ...EMPTY }, delta));
        } catch {
          // Backend down: keep the counts for the next flush rather than lose them.
          this.pending.set(id, add(this.pending.get(id) ?? { ...EMPTY }, delta));
        }
      }
    });
    return this.flushing;
  }

  /**
   * Add `delta` to the stored totals, read and replaced only while no other replica changed
   * them in between (RecordStore.replaceRecord): written unconditionally, two replicas flushing
   * at once each wrote their own sum over the same read, and one's counts were lost. False when
   * the record kept changing (the counts wait for the next flush).
   */
  private async addTo(collection: string, connector: string, delta: DeliveryCounts): Promise<boolean> {
    for (let attempt = 0; attempt < FLUSH_ATTEMPTS; attempt++) {
      const stored = await this.store.getRecord(collection, connector);
      const total = { ...add({ ...EMPTY, ...(stored?.data as Partial<DeliveryCounts> | undefined) }, delta) };
      if (stored ? await this.store.replaceRecord(collection, connector, stored.data, total) : await this.store.createRecord(collection, connector, total)) return true;
    }
    return false;
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
  }
}

const add = (a: DeliveryCounts, b: DeliveryCounts | undefined): DeliveryCounts => {
  if (!b) return a;
  const later = [a.last_event_at, b.last_event_at].filter((x): x is string => x !== null).sort().pop() ?? null;
  return {
    received: a.received + b.received,
    written: a.written + b.written,
    unchanged: a.unchanged + b.unchanged,
    duplicates: a.duplicates + b.duplicates,
    ignored: a.ignored + b.ignored,
    rejected: a.rejected + b.rejected,
    last_event_at: later,
  };
};
