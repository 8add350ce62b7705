import type { RecordListQuery, StoredRecord } from '../../ports/records.ts';
import { assertRecordSize } from '../record-size.ts';
import type { Sql } from './client.ts';

interface RecordRow {
  id: string;
  data: Record<string, unknown>;
  updated_at: Date;
}

const toRecord = (row: RecordRow): StoredRecord => ({ id: row.id, data: row.data, updated_at: row.updated_at.toISOString() });

/**
 * The RecordStore port as single statements on `cairn_records` (migrations/004_records.sql,
 * 015_record_id_hash.sql). Writes are held to the record size every backend keeps
 * (record-size.ts) before any statement.
 *
 * A record is keyed by its collection and the SHA-256 of its id (`id_hash`, a generated column),
 * so an id of any length fits the btree: each lookup names both the hash (for the key's index)
 * and the id itself. Lists walk an index on the id's first ID_HEAD characters, then the whole id.
 */

/** Characters of the id in the ordering index (cairn_records_id_order): at most 1 KiB of UTF-8. */
export const ID_HEAD = 256;
export const getRecord = async (sql: Sql, collection: string, id: string): Promise<StoredRecord | null> => {
  const rows = await sql<RecordRow[]>`select id, data, updated_at from cairn_records
     where collection = ${collection} and id_hash = cairn_record_id_hash(${id}) and id = ${id}`;
  return rows[0] ? toRecord(rows[0]) : null;
};

/** The primary key (collection, id_hash) decides between racing creators, across every replica. */
export const createRecord = async (sql: Sql, collection: string, id: string, data: Record<string, unknown>): Promise<boolean> => {
  assertRecordSize(collection, id, data);
  const rows = await sql`
    insert into cairn_records (collection, id, data) values (${collection}, ${id}, ${sql.json(data as never)})
    on conflict (collection, id_hash) do nothing returning id`;
  return rows.length === 1;
};

export const putRecord = async (sql: Sql, collection: string, id: string, data: Record<string, unknown>): Promise<void> => {
  assertRecordSize(collection, id, data);
  await sql`
    insert into cairn_records (collection, id, data) values (${collection}, ${id}, ${sql.json(data as never)})
    on conflict (collection, id_hash) do update set data = excluded.data, updated_at = now()`;
};

/** jsonb equality is by value (key order aside), as the port asks. */
export const replaceRecord = async (sql: Sql, collection: string, id: string, expected: Record<string, unknown>, data: Record<string, unknown>): Promise<boolean> => {
  assertRecordSize(collection, id, data);
  const rows = await sql`
    update cairn_records set data = ${sql.json(data as never)}, updated_at = now()
     where collection = ${collection} and id_hash = cairn_record_id_hash(${id}) and id = ${id}
       and data = ${sql.json(expected as never)}::jsonb returning id`;
  return rows.length === 1;
};

export const deleteRecord = async (sql: Sql, collection: string, id: string): Promise<boolean> => {
  const rows = await sql`
    delete from cairn_records where collection = ${collection} and id_hash = cairn_record_id_hash(${id}) and id = ${id} returning id`;
  return rows.length === 1;
};

/**
 * Ordered by (the id's head, the id): the order of the id alone, since ids differing in their
 * heads differ there first; this way the index on the head gives the rows in order and only ids
 * sharing a head are sorted. An id after `after` has a head at or after its head.
 */
export const listRecords = async (sql: Sql, collection: string, query: RecordListQuery): Promise<StoredRecord[]> => {
  const head = sql.unsafe(String(ID_HEAD));
  const rows = query.after === undefined
    ? await sql<RecordRow[]>`
        select id, data, updated_at from cairn_records where collection = ${collection}
         order by left(id, ${head}), id limit ${query.limit}`
    : await sql<RecordRow[]>`
        select id, data, updated_at from cairn_records
         where collection = ${collection} and left(id, ${head}) >= left(${query.after}::text, ${head}) and id > ${query.after}
         order by left(id, ${head}), id limit ${query.limit}`;
  return rows.map(toRecord);
};
