import { compareCodePoints } from '../../domain/order.ts';
import type { RecordListQuery, StoredRecord } from '../../ports/records.ts';
import type { Location } from './segment-log.ts';

/** How a record operation is written to the log. */
export type RecordOp =
  | { t: 'r'; c: string; i: string; d: Record<string, unknown>; u: string }
  | { t: 'x'; c: string; i: string };

/**
 * A record a checkpoint names by its place in the log (seg, off, len) instead of its contents:
 * the log record there is the `r` op that wrote it.
 */
export interface PlacedOp {
  t: 'l';
  c: string;
  i: string;
  l: [number, number, number];
}

/** What memory holds of one record: the record itself, or where the log holds it. */
export type Held = StoredRecord | Location;

export const isPlaced = (held: Held): held is Location => 'seg' in held;

/**
 * Log records up to this size are kept in memory whole; a larger one only by its place in the
 * log, read back when asked for. Write-mostly collections are what grows: the audit log is
 * one record per batch of events, and kept whole it made the heap grow by about 640 bytes
 * with every write a server ever took (and its collections slow as the heap grew). A place
 * costs a tenth of that. Small records (delivery dedup ids, counters) cost no more whole than
 * placed, and are read on the hot path.
 */
export const INLINE_BYTES = 256;

/** New ids inserted one by one (a shift of the list each) up to this many; more are merged in one pass. */
const FEW_ADDED = 8;

/**
 * One collection: its records by id, and the ids in code point order for listing. New ids
 * wait unsorted until a listing puts them in place, so a write costs no sort, and a listing
 * after a few new ids costs a shift of the list each, not a sort of it. Deleted ids stay in the
 * list until a listing walks over them or they are a quarter of it: a retention pass deleting
 * a page of old audit batches between listings would otherwise pass over the whole list each
 * time.
 */
class Collection {
  readonly held = new Map<string, Held>();
  private sorted: string[] = [];
  private added: string[] = [];
  /** Deleted ids the sorted list may still hold. */
  private dead = 0;

  set(id: string, value: Held): void {
    if (!this.held.has(id)) this.added.push(id);
    this.held.set(id, value);
  }

  delete(id: string): void {
    if (this.held.delete(id)) this.dead += 1;
  }

  /** Up to `limit` ids greater than `after`, in order. */
  page(after: string | undefined, limit: number): string[] {
    this.settle();
    const start = after === undefined ? 0 : firstAfter(this.sorted, after);
    const ids: string[] = [];
    let i = start;
    for (; i < this.sorted.length && ids.length < limit; i++) {
      const id = this.sorted[i] as string;
      if (this.held.has(id)) ids.push(id);
    }
    // Deleted ids walked over leave the list, so that the next page from here (the next page
    // of old batches to expire) does not walk them again.
    const skipped = i - start - ids.length;
    if (skipped > 0) {
      this.sorted.splice(start, i - start, ...ids);
      this.dead = Math.max(0, this.dead - skipped);
    }
    return ids;
  }

  private settle(): void {
    if (this.added.length > FEW_ADDED || this.dead > this.sorted.length / 4) {
      this.merge();
      return;
    }
    for (const id of this.added) {
      const at = firstAfter(this.sorted, id);
      // An id deleted and created again may still be in the list.
      if (this.sorted[at - 1] !== id) this.sorted.splice(at, 0, id);
    }
    this.added = [];
  }

  /** One pass: the new ids sorted into the list, deleted ones dropped. */
  private merge(): void {
    const added = this.added.sort(compareCodePoints);
    const kept = this.sorted;
    const merged: string[] = [];
    let a = 0;
    let k = 0;
    while (a < added.length || k < kept.length) {
      const next = (k >= kept.length || (a < added.length && compareCodePoints(added[a] as string, kept[k] as string) < 0) ? added[a++] : kept[k++]) as string;
      // An id deleted and created again is in both lists (and twice in `added` if it was deleted and created twice).
      if (next !== merged.at(-1) && this.held.has(next)) merged.push(next);
    }
    this.sorted = merged;
    this.added = [];
    this.dead = 0;
  }
}

/**
 * The filesystem backend's shared records, rebuilt from the checkpoint and the log at start:
 * small ones whole, large ones by their place in the log (see INLINE_BYTES). Reading a placed
 * record is the store's part (it owns the log).
 */
export class RecordTable {
  private readonly collections = new Map<string, Collection>();
  /**
   * Log bytes of records since replaced or deleted: what a compaction would reclaim from the
   * shared records. Exact for records held by place; for one held whole, the size of its data as
   * JSON plus a record's framing, as the log wrote it within a few bytes.
   */
  garbageBytes = 0;

  get(collection: string, id: string): Held | undefined {
    return this.collections.get(collection)?.held.get(id);
  }

  /** Apply an op the log holds at `at`; a record op from a checkpoint's block has no place. */
  apply(op: RecordOp | PlacedOp, at?: Location): void {
    const before = this.get(op.c, op.i);
    if (before) this.garbageBytes += isPlaced(before) ? before.len : wholeBytes(op.c, before);
    if (op.t === 'x') {
      this.collections.get(op.c)?.delete(op.i);
      return;
    }
    let records = this.collections.get(op.c);
    if (!records) {
      records = new Collection();
      this.collections.set(op.c, records);
    }
    if (op.t === 'l') records.set(op.i, { seg: op.l[0], off: op.l[1], len: op.l[2] });
    else if (at && at.len > INLINE_BYTES) records.set(op.i, at);
    else records.set(op.i, Object.freeze({ id: op.i, data: op.d, updated_at: op.u }));
  }

  /**
   * A compaction copied the record memory held as `from` to `to`: hold it by that place from now
   * on, unless a write replaced it meanwhile. A small record moved stays whole.
   */
  move(collection: string, id: string, from: Held, to: Location): void {
    const records = this.collections.get(collection);
    if (records?.held.get(id) !== from || (!isPlaced(from) && to.len <= INLINE_BYTES)) return;
    records.held.set(id, to);
  }

  /** A page of a collection in id order: each id with what memory holds of it. */
  page(collection: string, query: RecordListQuery): Array<[string, Held]> {
    const records = this.collections.get(collection);
    if (!records) return [];
    return records.page(query.after, query.limit).map((id) => [id, records.held.get(id) as Held]);
  }

  /** Every live record: its collection, its id and what memory holds of it. */
  *entries(): Generator<[string, string, Held]> {
    for (const [c, records] of this.collections) for (const [i, held] of records.held) yield [c, i, held];
  }

  /** Every live record as the op that recreates it or names its place (for checkpoints). */
  *ops(): Generator<RecordOp | PlacedOp> {
    for (const [c, i, held] of this.entries()) {
      yield isPlaced(held) ? { t: 'l', c, i, l: [held.seg, held.off, held.len] } : { t: 'r', c, i, d: held.data, u: held.updated_at };
    }
  }
}

/** About what the log holds for a record held whole: its op's JSON and the record header. */
const wholeBytes = (collection: string, record: StoredRecord): number =>
  Buffer.byteLength(JSON.stringify(record.data)) + Buffer.byteLength(collection) + Buffer.byteLength(record.id) + RECORD_FRAMING;
/** A record op's bytes beside its data, collection and id: the header and the op's keys and time. */
const RECORD_FRAMING = 70;

/** The index of the first id greater than `after` in sorted `ids` (binary search). */
const firstAfter = (ids: readonly string[], after: string): number => {
  let lo = 0;
  let hi = ids.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareCodePoints(ids[mid] as string, after) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
};
