import { compareCodePoints } from '../../domain/order.ts';
import type { RecordListQuery, StoredRecord } from '../../ports/records.ts';

/** How a record operation is written to the log. */
export type RecordOp =
  | { t: 'r'; c: string; i: string; d: Record<string, unknown>; u: string }
  | { t: 'x'; c: string; i: string };

/** The filesystem backend's shared records, in memory, rebuilt from the log at start. */
export class RecordTable {
  private readonly collections = new Map<string, Map<string, StoredRecord>>();

  get(collection: string, id: string): StoredRecord | undefined {
    return this.collections.get(collection)?.get(id);
  }

  apply(op: RecordOp): void {
    let records = this.collections.get(op.c);
    if (op.t === 'x') {
      records?.delete(op.i);
      return;
    }
    if (!records) {
      records = new Map();
      this.collections.set(op.c, records);
    }
    records.set(op.i, Object.freeze({ id: op.i, data: op.d, updated_at: op.u }));
  }

  list(collection: string, query: RecordListQuery): StoredRecord[] {
    const records = this.collections.get(collection);
    if (!records) return [];
    const ids = [...records.keys()].sort(compareCodePoints);
    const start = query.after === undefined ? 0 : ids.findIndex((id) => compareCodePoints(id, query.after as string) > 0);
    if (start < 0) return [];
    return ids.slice(start, start + query.limit).map((id) => records.get(id) as StoredRecord);
  }

  /** Every live record as the op that recreates it (for checkpoints). */
  *ops(): Generator<RecordOp> {
    for (const [c, records] of this.collections) {
      for (const r of records.values()) yield { t: 'r', c, i: r.id, d: r.data, u: r.updated_at };
    }
  }
}
