import type { Entry, EntryAddress } from '../../domain/entry.ts';
import type { Sql } from './client.ts';
import { headWithoutVersion, versionsBeyondHead } from './damaged-row.ts';
import { ENTRY_COLUMNS, type EntryRow, rowToEntry, selectEntryColumns } from './entry-row.ts';

const COLUMNS = selectEntryColumns('v');
/** The version column is an int4; numbers beyond it cannot name a stored version. */
export const MAX_VERSION = 2 ** 31 - 1;

// Each read is one walk of the versions primary key (namespace, entity_path, key, version).
// These stay prepared statements: with the whole key given, a generic plan is the index.

/** A row of a current-version read: the head's version (null without a head) beside its newest version row's columns (all null without one). */
export type CheckedHeadRow = EntryRow & { head_version: number | null };

/**
 * The entry of a current-version read, checked against its head: null when neither a head
 * nor a version row exists; damage when they disagree. A head naming a version the versions
 * table lacks would otherwise be answered with an older version as if it were the current one
 * (a read saying 4 while a write's if_version 4 is refused as behind 5), and version rows
 * without a head would be an entry that no list, scan or export shows.
 */
export const checkedHead = (a: EntryAddress, row: CheckedHeadRow | undefined): Entry | null => {
  const head = row?.head_version ?? null;
  const newest = row?.version ?? null;
  if (head === null && newest === null) return null;
  if (head !== null && newest !== null && Number(head) === Number(newest)) return rowToEntry(row as EntryRow);
  if (head !== null && (newest === null || Number(newest) < Number(head))) throw headWithoutVersion(a, head);
  throw versionsBeyondHead(a, newest, head);
};

/**
 * The newest version, with its head's version to check it by (checkedHead): one walk of the
 * versions primary key to the key's last index entry, beside one probe of the heads key.
 */
export const readHead = async (sql: Sql, a: EntryAddress): Promise<Entry | null> => {
  const rows = await sql<CheckedHeadRow[]>`
    select h.version as head_version, ${sql.unsafe(COLUMNS)}
      from (select 1) one
      left join cairn_heads h on h.namespace = ${a.namespace} and h.entity_path = ${a.entity_path} and h.key = ${a.key}
      left join lateral (
            select ${sql.unsafe(ENTRY_COLUMNS.join(', '))} from cairn_versions v
             where v.namespace = ${a.namespace} and v.entity_path = ${a.entity_path} and v.key = ${a.key}
             order by v.version desc limit 1) v on true`;
  return checkedHead(a, rows[0]);
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
