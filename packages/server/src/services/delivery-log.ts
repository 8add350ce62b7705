import type { DeliveryLine, DeliveryOutcomeName } from 'cairn-memory-client';
import { z } from 'zod';
import type { Expect, SameUnion } from '../domain/type-checks.ts';
import type { RecordStore, StoredRecord } from '../ports/records.ts';
import { clipText } from '../domain/clip-text.ts';

// A line of the recent-deliveries log: declared once, in the client.
export type { DeliveryLine };

/** Deliveries kept per connector, as providers' own delivery pages show about as many. */
export const DELIVERY_LOG_SIZE = 100;
/** Refused lines one replica logs per connector per second: forgeries must not become a write flood. */
const REJECTED_PER_SECOND = 10;
/**
 * A replica that has not logged for this long catches up with the sequence before claiming a
 * number: a number more than the log's size behind was freed by a delete, and a line created
 * under it would be pruned at once as the oldest.
 */
const RESYNC_MS = 1000;
/** Numbers taken by other replicas in a row before this one re-reads the sequence. */
const CONFLICTS_BEFORE_RESYNC = 2;
/** Claims one line may try before it is dropped (only under a storm of other replicas' lines). */
const MAX_CLAIMS = 50;

export const DELIVERY_LOGS = 'delivery-log';
const collection = (namespace: string, connector: string): string => `${DELIVERY_LOGS}/${namespace}/${connector}`;

/** Every outcome a line may name: exactly the client's `DeliveryOutcomeName` (checked below). */
export const DELIVERY_OUTCOMES = ['written', 'unchanged', 'duplicate', 'ignored', 'rejected'] as const satisfies readonly DeliveryOutcomeName[];
type _EveryOutcome = Expect<SameUnion<(typeof DELIVERY_OUTCOMES)[number], DeliveryOutcomeName>>;

const LineFields = z.looseObject({
  at: z.iso.datetime(),
  event: z.string().max(128).nullable(),
  delivery_id: z.string().max(200).nullable(),
  outcome: z.enum(DELIVERY_OUTCOMES).describe(
    'written: versions stored (or a note held for its incident); unchanged: taken in, but every entry it maps to already held it or a later state, so no version; duplicate: a replay of a delivery id; ignored: maps to no entry (a ping, an event not captured); rejected: refused (signature, media type, malformed, too large).',
  ),
  status: z.number().int().min(100).max(599),
  reason: z.string().max(500).nullable(),
});
/** A stored line as `record` writes it, which `read` answers as it is (import checks archives against it). */
export const DeliveryLineRecordSchema: z.ZodType<Omit<DeliveryLine, 'seq'>> = LineFields;
/** A line as `GET /api/v1/connectors/<name>/deliveries` answers it (for the OpenAPI document). */
export const DeliveryLineSchema = LineFields.extend({ seq: z.number().int().min(1) });
/** Zero-padded so ids sort as the sequence does (RecordStore lists in id order). */
const idOf = (seq: number): string => String(seq).padStart(15, '0');
const seqOf = (record: StoredRecord): number => Number(record.id);

/** Log text comes from unverified input: keep it one short printable line. */
const printable = (text: string | null, max: number): string | null =>
  text === null ? null : clipText(text.toWellFormed().replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, ' '), max);

/**
 * The last deliveries of each connector, shared by every replica through the RecordStore.
 * Each line is one record created under the next sequence number (createRecord is atomic, so
 * two replicas never take the same number and no line overwrites another) and the line 100
 * numbers older is deleted beside it: two small record operations per delivery, in one round
 * trip, however busy. A replica keeps the next number in memory and catches up (a listing
 * of the lines past it) after a quiet second or when other replicas have taken the numbers it
 * tries. The log is advisory: a backend error while logging never fails the delivery itself.
 */
export class DeliveryLog {
  private readonly store: RecordStore;
  private readonly now: () => number;
  private readonly next = new Map<string, { seq: number; synced: number }>();
  /** One re-read of the sequence at a time per connector: concurrent claims share it. */
  private readonly syncing = new Map<string, Promise<unknown>>();
  private readonly refused = new Map<string, { second: number; lines: number }>();

  constructor(store: RecordStore, now: () => number) {
    this.store = store;
    this.now = now;
  }

  async record(namespace: string, connector: string, line: Omit<DeliveryLine, 'seq'>): Promise<void> {
    if (line.outcome === 'rejected' && !this.mayLogRefusal(`${namespace}\u0000${connector}`)) return;
    const data = { ...line, event: printable(line.event, 128), delivery_id: printable(line.delivery_id, 200), reason: printable(line.reason, 500) };
    try {
      await this.claim(namespace, connector, data);
    } catch {
      // Backend trouble: the delivery's own answer says so; the log just misses a line.
    }
  }

  /** The kept lines, newest first. Lines beyond the size (a delete that failed) are pruned here. */
  async read(namespace: string, connector: string): Promise<DeliveryLine[]> {
    const records = await this.readAll(namespace, connector);
    const extra = records.slice(0, Math.max(0, records.length - DELIVERY_LOG_SIZE));
    for (const record of extra) await this.store.deleteRecord(collection(namespace, connector), record.id).catch(() => false);
    return records.slice(extra.length).reverse().map((r) => ({ ...(r.data as Omit<DeliveryLine, 'seq'>), seq: seqOf(r) }));
  }

  /** The log's records in sequence order; moves this replica's next number past every one listed. */
  private async readAll(namespace: string, connector: string): Promise<StoredRecord[]> {
    // Twice the size: stragglers of failed deletes must not hide the newest lines.
    const records = await this.store.listRecords(collection(namespace, connector), { limit: DELIVERY_LOG_SIZE * 2 });
    this.advance(`${namespace}\u0000${connector}`, records);
    return records;
  }

  /** Never backwards: claims of this replica may be in flight beyond the last listed line. */
  private advance(key: string, records: readonly StoredRecord[]): void {
    const listed = (records.at(-1) ? seqOf(records.at(-1) as StoredRecord) : 0) + 1;
    this.next.set(key, { seq: Math.max(listed, this.next.get(key)?.seq ?? 1), synced: this.now() });
  }

  /**
   * Catch up with the numbers other replicas took: list only the lines past this replica's
   * next number (none when it is current: one listing, no reads), page by page.
   */
  private resync(namespace: string, connector: string): Promise<unknown> {
    const key = `${namespace}\u0000${connector}`;
    const running = this.syncing.get(key);
    if (running) return running;
    const sync = (async () => {
      for (;;) {
        const from = this.next.get(key)?.seq ?? 1;
        const page = await this.store.listRecords(collection(namespace, connector), { ...(from > 1 ? { after: idOf(from - 1) } : {}), limit: DELIVERY_LOG_SIZE });
        this.advance(key, page);
        if (page.length < DELIVERY_LOG_SIZE) return;
      }
    })().finally(() => this.syncing.delete(key));
    this.syncing.set(key, sync);
    return sync;
  }

  /**
   * Take the next free sequence number for a line and create it. Numbers are handed out in
   * this replica without waiting (concurrent deliveries get different ones); a number another
   * replica took is skipped, and after a few in a row the sequence is re-read.
   */
  private async claim(namespace: string, connector: string, data: Record<string, unknown>): Promise<number> {
    const key = `${namespace}\u0000${connector}`;
    const known = this.next.get(key);
    if (!known || this.now() - known.synced > RESYNC_MS) await this.resync(namespace, connector);
    let conflicts = 0;
    for (let tries = 0; tries < MAX_CLAIMS; tries++) {
      if (conflicts >= CONFLICTS_BEFORE_RESYNC) {
        await this.resync(namespace, connector);
        conflicts = 0;
      }
      const next = this.next.get(key) ?? { seq: 1, synced: this.now() };
      this.next.set(key, { ...next, seq: next.seq + 1 });
      // The line this number pushes out goes in the same round trip (on the filesystem, the
      // same fsync): whoever holds the number prunes it, so a lost claim pruned nothing extra.
      const [created] = await Promise.all([
        this.store.createRecord(collection(namespace, connector), idOf(next.seq), data),
        next.seq > DELIVERY_LOG_SIZE ? this.store.deleteRecord(collection(namespace, connector), idOf(next.seq - DELIVERY_LOG_SIZE)) : false,
      ]);
      if (created) return next.seq;
      conflicts += 1;
    }
    throw new Error('delivery log: no free sequence number');
  }

  private mayLogRefusal(key: string): boolean {
    const second = Math.floor(this.now() / 1000);
    const budget = this.refused.get(key);
    if (!budget || budget.second !== second) {
      this.refused.set(key, { second, lines: 1 });
      return true;
    }
    budget.lines += 1;
    return budget.lines <= REJECTED_PER_SECOND;
  }
}
