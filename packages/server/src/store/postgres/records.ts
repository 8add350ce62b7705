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
 * The RecordStore port as single statements on `cairn_records` (migrations/004_records.sql).
 * Writes are held to the record size every backend keeps (record-size.ts) before any statement.
 */
export const getRecord = async (sql: Sql, collection: string, id: string): Promise<StoredRecord | null> => {
  const rows = await sql<RecordRow[]>`select id, data, updated_at from cairn_records where collection = ${collection} and id = ${id}`;
  return rows[0] ? toRecord(rows[0]) : null;
};

/** The primary key decides between racing creators, across every replica. */
export const createRecord = async (sql: Sql, collection: string, id: string, data: Record<string, unknown>): Promise<boolean> => {
  assertRecordSize(collection, id, data);
  const rows = await sql`
    insert into cairn_records (collection, id, data) values (${collection}, ${id}, ${sql.json(data as never)})
    on conflict (collection, id) do nothing returning id`;
  return rows.length === 1;
};

export const putRecord = async (sql: Sql, collection: string, id: string, data: Record<string, unknown>): Promise<void> => {
  assertRecordSize(collection, id, data);
  await sql`
    insert into cairn_records (collection, id, data) values (${collection}, ${id}, ${sql.json(data as never)})
    on conflict (collection, id) do update set data = excluded.data, updated_at = now()`;
};

/** jsonb equality is by value (key order aside), as the port asks. */
export const replaceRecord = async (sql: Sql, collection: string, id: string, expected: Record<string, unknown>, data: Record<string, unknown>): Promise<boolean> => {
  assertRecordSize(collection, id, data);
  const rows = await sql`
    update cairn_records set data = ${sql.json(data as never)}, updated_at = now()
     where collection = ${collection} and id = ${id} and data = ${sql.json(expected as never)}::jsonb returning id`;
  return rows.length === 1;
};

export const deleteRecord = async (sql: Sql, collection: string, id: string): Promise<boolean> => {
  const rows = await sql`delete from cairn_records where collection = ${collection} and id = ${id} returning id`;
  return rows.length === 1;
};

export const listRecords = async (sql: Sql, collection: string, query: RecordListQuery): Promise<StoredRecord[]> => {
  const rows = query.after === undefined
    ? await sql<RecordRow[]>`
        select id, data, updated_at from cairn_records where collection = ${collection} order by id limit ${query.limit}`
    : await sql<RecordRow[]>`
        select id, data, updated_at from cairn_records where collection = ${collection} and id > ${query.after}
         order by id limit ${query.limit}`;
  return rows.map(toRecord);
};
