import type { Entry } from '../../domain/entry.ts';
import type { Sql } from './client.ts';
import { type EntryRow, rowToEntry, selectEntryColumns } from './entry-row.ts';

/** What the cairn_write trigger announces (migrations/002_write_notify.sql). */
export interface WriteNote {
  namespace: string;
  entity_path: string;
  key: string;
  version: number;
  seq: number;
}

/** Parses a notification payload; null for anything not written by our trigger. */
export const parseWriteNote = (payload: string): WriteNote | null => {
  try {
    const n = JSON.parse(payload) as Partial<Record<keyof WriteNote, unknown>>;
    const text = (x: unknown): x is string => typeof x === 'string';
    const int = (x: unknown): x is number => Number.isSafeInteger(x);
    if (!text(n.namespace) || !text(n.entity_path) || !text(n.key) || !int(n.version) || !int(n.seq)) return null;
    return { namespace: n.namespace, entity_path: n.entity_path, key: n.key, version: n.version, seq: n.seq };
  } catch {
    return null;
  }
};

/** A version with its global sequence number. */
export interface SequencedEntry {
  seq: number;
  entry: Entry;
}

type SeqRow = EntryRow & { seq: string };
const COLUMNS = selectEntryColumns('v');
const toSequenced = (row: SeqRow): SequencedEntry => ({ seq: Number(row.seq), entry: rowToEntry(row) });

/** The versions behind a batch of notifications, in one query on the seq index. */
export const fetchBySeq = async (sql: Sql, seqs: number[]): Promise<Map<number, Entry>> => {
  const rows = await sql<SeqRow[]>`
    select ${sql.unsafe(COLUMNS)}, v.seq from cairn_versions v
     where v.seq = any(${`{${seqs.join(',')}}`}::int8[])`;
  return new Map(rows.map((r) => [Number(r.seq), rowToEntry(r)]));
};

/**
 * Versions with seq above `after`, oldest first: what a replica may have missed. The limit is
 * written into the statement because a prepared plan cannot see a LIMIT parameter and may
 * then prefer a full scan and a sort over walking the seq index.
 */
export const fetchAfterSeq = async (sql: Sql, after: number, limit: number): Promise<SequencedEntry[]> => {
  const rows = await sql<SeqRow[]>`
    select ${sql.unsafe(COLUMNS)}, v.seq from cairn_versions v
     where v.seq > ${after} order by v.seq limit ${sql.unsafe(String(Math.trunc(limit)))}`;
  return rows.map(toSequenced);
};

export const maxSeq = async (sql: Sql): Promise<number> => {
  const rows = await sql<{ seq: string }[]>`select coalesce(max(seq), 0) as seq from cairn_versions`;
  return Number(rows[0]?.seq ?? 0);
};

/** A set that forgets its oldest members beyond `capacity`, for de-duplication windows. */
export class RecentSet<T> {
  private readonly items = new Set<T>();
  private readonly capacity: number;

  constructor(capacity: number) {
    this.capacity = capacity;
  }

  has(item: T): boolean {
    return this.items.has(item);
  }

  add(item: T): void {
    this.items.add(item);
    if (this.items.size > this.capacity) this.items.delete(this.items.values().next().value as T);
  }

  /** The smallest item remembered (a linear scan: called once per reconnect). */
  smallest(this: RecentSet<number>): number | undefined {
    let min: number | undefined;
    for (const item of this.items) if (min === undefined || item < min) min = item;
    return min;
  }
}
