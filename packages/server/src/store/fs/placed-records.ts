import type { StoredRecord } from '../../ports/records.ts';
import { type Held, type RecordOp, type RecordTable, isPlaced } from './record-table.ts';
import type { Location, SegmentLog } from './segment-log.ts';

/**
 * Records read back this recently are kept, so that a large record read on every request (a
 * connector's settings, read for each delivery) costs no disk read. Entries are keyed by the
 * place they were read from: a new write or a compaction's move gives the record a new place,
 * so a stale entry is never answered, only left to age out.
 */
const CACHED_RECORDS = 256;

/** Reads the records the table holds only by their place in the log (see INLINE_BYTES). */
export class PlacedRecords {
  private readonly log: SegmentLog;
  private readonly table: RecordTable;
  private readonly cache = new Map<string, { at: Location; record: StoredRecord }>();

  constructor(log: SegmentLog, table: RecordTable) {
    this.log = log;
    this.table = table;
  }

  /** The record `held` stands for: itself when memory holds it whole, else read from the log. */
  async resolve(collection: string, id: string, held: Held): Promise<StoredRecord | null> {
    if (!isPlaced(held)) return held;
    const key = `${collection}\u0000${id}`;
    const hit = this.cache.get(key);
    if (hit?.at === held) {
      // Map order is insertion order: move the hit to the end, so the oldest read goes first.
      this.cache.delete(key);
      this.cache.set(key, hit);
      return hit.record;
    }
    const record = await this.read(collection, id, held);
    if (record && this.table.get(collection, id) === held) {
      this.cache.delete(key);
      this.cache.set(key, { at: held, record });
      if (this.cache.size > CACHED_RECORDS) this.cache.delete(this.cache.keys().next().value as string);
    }
    return record;
  }

  private async read(collection: string, id: string, at: Location): Promise<StoredRecord | null> {
    let op: Extract<RecordOp, { t: 'r' }>;
    try {
      op = (await this.log.readDecoded(at)) as Extract<RecordOp, { t: 'r' }>;
    } catch (error) {
      // A compaction may have moved the record (and deleted its old segment) meanwhile, or a
      // write replaced or deleted it.
      const now = this.table.get(collection, id);
      if (!now) return null;
      if (now === at) throw error;
      return this.resolve(collection, id, now);
    }
    return Object.freeze({ id, data: op.d, updated_at: op.u });
  }
}
