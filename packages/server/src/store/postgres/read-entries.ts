import type { Entry, EntryAddress } from '../../domain/entry.ts';
import type { Sql } from './client.ts';
import { headWithoutVersion } from './damaged-row.ts';
import { ENTRY_COLUMNS, type EntryRow, rowToEntry, selectEntryColumns } from './entry-row.ts';

const COLUMNS = selectEntryColumns('v');
/** The version column is an int4; numbers beyond it cannot name a stored version. */
export const MAX_VERSION = 2 ** 31 - 1;

// Each read is one walk of the versions primary key (namespace, entity_path, key, version).
// These stay prepared statements: with the whole key given, a generic plan is the index.

/**
 * The newest version: the head row would need a join, the key's last index entry does not.
 * The head is not checked here (a second index probe per read halved the read rate at 50
 * connections); a head naming a version the table lacks is found by lists, scans and exports,
 * which read the heads.
 */
export const readHead = async (sql: Sql, a: EntryAddress): Promise<Entry | null> => {
  const rows = await sql<EntryRow[]>`
    select ${sql.unsafe(COLUMNS)} from cairn_versions v
     where v.namespace = ${a.namespace} and v.entity_path = ${a.entity_path} and v.key = ${a.key}
     order by v.version desc limit 1`;
  return rows[0] ? rowToEntry(rows[0]) : null;
};

export const readVersion = async (sql: Sql, a: EntryAddress, version: number): Promise<Entry | null> => {
  const rows = await sql<EntryRow[]>`
    select ${sql.unsafe(COLUMNS)} from cairn_versions v
     where v.namespace = ${a.namespace} and v.entity_path = ${a.entity_path} and v.key = ${a.key}
       and v.version = ${version}`;
  return rows[0] ? rowToEntry(rows[0]) : null;
};

/** The newest version written at or before `at`: a walk down the key's versions from the newest. */
export const readVersionAt = async (sql: Sql, a: EntryAddress, at: Date): Promise<Entry | null> => {
  const rows = await sql<EntryRow[]>`
    select ${sql.unsafe(COLUMNS)} from cairn_versions v
     where v.namespace = ${a.namespace} and v.entity_path = ${a.entity_path} and v.key = ${a.key}
       and v.written_at <= ${at}
     order by v.version desc limit 1`;
  return rows[0] ? rowToEntry(rows[0]) : null;
};

/** Newest first, strictly below `before`. */
export const readHistory = async (sql: Sql, a: EntryAddress, before: number, limit: number): Promise<Entry[]> => {
  const rows = await sql<EntryRow[]>`
    select ${sql.unsafe(COLUMNS)} from cairn_versions v
     where v.namespace = ${a.namespace} and v.entity_path = ${a.entity_path} and v.key = ${a.key}
       and v.version < ${before}::int8
     order by v.version desc limit ${limit}`;
  return rows.map(rowToEntry);
};

/** The heads columns a page selects beside a version's, to name a head whose version row is missing. */
export const HEAD_COLUMNS = 'h.namespace as head_namespace, h.entity_path as head_entity_path, h.key as head_key, h.version as head_version';

/** A row of a heads page: the head's columns, and its version's (all null when the versions table lacks it). */
export type HeadPageRow = EntryRow & { head_namespace: string; head_entity_path: string; head_key: string; head_version: number };

/**
 * The entry of a head row joined (left, lateral) to its version row. A head without its
 * version row is damage, refused with its address: skipped, it would shorten the page it is
 * on, and a scan that ends at a short page would end there (an export cut short and valid).
 */
export const headRowToEntry = (row: HeadPageRow): Entry => {
  if (row.version === null) {
    throw headWithoutVersion({ namespace: row.head_namespace, entity_path: row.head_entity_path, key: row.head_key }, row.head_version);
  }
  return rowToEntry(row);
};

/**
 * One page of current versions (tombstones and expired included) in primary key order after
 * `after`, for scans that must not hold a connection or a snapshot between pages. The page
 * holds one entry per head row, so a page shorter than `limit` is the last one.
 */
export const readHeadsPage = async (sql: Sql, after: EntryAddress | undefined, limit: number): Promise<Entry[]> => {
  const from = after ?? { namespace: '', entity_path: '', key: '' };
  const rows = await sql<HeadPageRow[]>`
    select ${sql.unsafe(HEAD_COLUMNS)}, ${sql.unsafe(COLUMNS)}
      from (select namespace, entity_path, key, version from cairn_heads h
             where (h.namespace, h.entity_path, h.key) > (${from.namespace}, ${from.entity_path}, ${from.key})
             order by h.namespace, h.entity_path, h.key
             limit ${sql.unsafe(String(Math.trunc(limit)))}) h
      left join lateral (
            select ${sql.unsafe(ENTRY_COLUMNS.join(', '))} from cairn_versions v
             where v.namespace = h.namespace and v.entity_path = h.entity_path
               and v.key = h.key and v.version = h.version
             limit 1) v on true
     order by h.namespace, h.entity_path, h.key`;
  return rows.map(headRowToEntry);
};
