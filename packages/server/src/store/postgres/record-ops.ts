import type { StoredRecord } from '../../ports/records.ts';
import { assertRecordSize } from '../record-size.ts';
import type { Sql } from './client.ts';
import { textArrayLiteral } from './entry-row.ts';
import * as records from './records.ts';
import { StatementBatcher } from './statement-batcher.ts';

/** Record operations per statement. */
const MAX_BATCH = 64;

interface RecordAt {
  collection: string;
  id: string;
}

interface RecordRow {
  id: string;
  data: Record<string, unknown>;
  updated_at: Date;
}

const keyOf = (r: RecordAt): string => `${r.collection}\u0000${r.id}`;

/** Many reads in one statement; `i` is each read's place, so rows find their callers. */
const getMany = async (sql: Sql, at: readonly RecordAt[]): Promise<(StoredRecord | null)[]> => {
  const rows = await sql<(RecordRow & { i: string })[]>`
    select a.i, c.id, c.data, c.updated_at
      from unnest(${textArrayLiteral(at.map((a) => a.collection))}::text[],
                  ${textArrayLiteral(at.map((a) => a.id))}::text[]) with ordinality as a(collection, id, i)
      join cairn_records c on c.collection = a.collection and c.id_hash = cairn_record_id_hash(a.id) and c.id = a.id`;
  const found: (StoredRecord | null)[] = at.map(() => null);
  for (const row of rows) found[Number(row.i) - 1] = { id: row.id, data: row.data, updated_at: row.updated_at.toISOString() };
  return found;
};

/**
 * Many creates in one statement (one commit). The primary key (collection, id_hash) still decides between racing
 * creators on every replica; within the batch the first to ask for an id is its creator and
 * the others are told it exists, as they would have been one after another.
 */
const createMany = async (sql: Sql, items: readonly (RecordAt & { data: Record<string, unknown> })[]): Promise<boolean[]> => {
  const first = new Map<string, number>();
  items.forEach((item, i) => {
    if (!first.has(keyOf(item))) first.set(keyOf(item), i);
  });
  const unique = [...first.values()].map((i) => items[i] as RecordAt & { data: Record<string, unknown> });
  const rows = await sql<RecordAt[]>`
    insert into cairn_records (collection, id, data)
    select r.collection, r.id, r.data from json_to_recordset(${JSON.stringify(unique)}::text::json) as r(collection text, id text, data jsonb)
    on conflict (collection, id_hash) do nothing returning collection, id`;
  const created = new Set(rows.map(keyOf));
  return items.map((item, i) => first.get(keyOf(item)) === i && created.has(keyOf(item)));
};

/** Many deletes in one statement (one commit); of several deletes of one record, the first deleted it. */
const deleteMany = async (sql: Sql, at: readonly RecordAt[]): Promise<boolean[]> => {
  const rows = await sql<RecordAt[]>`
    delete from cairn_records c
     using unnest(${textArrayLiteral(at.map((a) => a.collection))}::text[],
                  ${textArrayLiteral(at.map((a) => a.id))}::text[]) as a(collection, id)
     where c.collection = a.collection and c.id_hash = cairn_record_id_hash(a.id) and c.id = a.id
    returning c.collection, c.id`;
  const deleted = new Set(rows.map(keyOf));
  const told = new Set<string>();
  return at.map((a) => {
    const key = keyOf(a);
    if (!deleted.has(key) || told.has(key)) return false;
    told.add(key);
    return true;
  });
};

/**
 * The record reads, creates and deletes of a busy server, coalesced (statement-batcher.ts) as
 * head reads are: each is a statement of its own under light load, and operations beyond
 * `maxInFlight` statements out of one kind share the next statement. A webhook delivery reads
 * and creates its dedup record and logs a line (a create and a delete): alone, each write was
 * a statement and a commit of its own, and the driver's and the socket's work per statement
 * was about a third of Cairn's CPU per delivery (README, Performance).
 */
export class RecordOps {
  private readonly gets: StatementBatcher<RecordAt, StoredRecord | null>;
  private readonly creates: StatementBatcher<RecordAt & { data: Record<string, unknown> }, boolean>;
  private readonly deletes: StatementBatcher<RecordAt, boolean>;

  constructor(sql: Sql, maxInFlight: number, abandonMs?: number) {
    const shared = { maxBatch: MAX_BATCH, maxInFlight, ...(abandonMs === undefined ? {} : { abandonMs }) };
    this.gets = new StatementBatcher({ ...shared, alone: (a) => records.getRecord(sql, a.collection, a.id), together: (at) => getMany(sql, at) });
    this.creates = new StatementBatcher({ ...shared, alone: (a) => records.createRecord(sql, a.collection, a.id, a.data), together: (items) => createMany(sql, items) });
    this.deletes = new StatementBatcher({ ...shared, alone: (a) => records.deleteRecord(sql, a.collection, a.id), together: (at) => deleteMany(sql, at) });
  }

  get(collection: string, id: string): Promise<StoredRecord | null> {
    return this.gets.run({ collection, id });
  }

  /** Held to the record size (record-size.ts) before it joins a statement, as a create alone is. */
  async create(collection: string, id: string, data: Record<string, unknown>): Promise<boolean> {
    assertRecordSize(collection, id, data);
    return this.creates.run({ collection, id, data });
  }

  delete(collection: string, id: string): Promise<boolean> {
    return this.deletes.run({ collection, id });
  }
}
