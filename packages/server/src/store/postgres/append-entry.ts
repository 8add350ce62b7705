import type postgres from 'postgres';
import type { Entry, EntryAddress } from '../../domain/entry.ts';
import { VersionConflict } from '../../domain/errors.ts';
import type { Sql } from './client.ts';
import { isUniqueViolation } from './db-errors.ts';
import { ENTRY_CASTS, ENTRY_COLUMNS, entryParams } from './entry-row.ts';

// $1… follow ENTRY_COLUMNS; the head row reuses the same parameters, the one after them is the expected head.
const param = (column: (typeof ENTRY_COLUMNS)[number]): string => `$${ENTRY_COLUMNS.indexOf(column) + 1}`;
const HEAD_VALUES = ['namespace', 'entity_path', 'key', 'version', 'agent_id', 'written_at', 'expires_at', 'deleted'] as const;

const INSERT_VERSION = `
  insert into cairn_versions (${ENTRY_COLUMNS.join(', ')})
  select ${ENTRY_COLUMNS.map((c) => `${param(c)}::${ENTRY_CASTS[c]}`).join(', ')} from head
  returning seq`;

/**
 * One statement, hence one round trip and one implicit transaction: claim the head, then
 * insert the version only if the claim succeeded. The claim is the compare-and-set. Under
 * READ COMMITTED a concurrent claim on the same row makes this statement wait for the other
 * transaction and then re-check its condition against the committed row, so of two racing
 * writers exactly one claims version N and the other claims nothing.
 */
const CREATE_FIRST = `
  with head as (
    insert into cairn_heads (${HEAD_VALUES.join(', ')})
    values (${HEAD_VALUES.map(param).join(', ')})
    on conflict do nothing
    returning 1
  )${INSERT_VERSION}`;

const ADVANCE = `
  with head as (
    update cairn_heads
       set ${HEAD_VALUES.slice(3).map((c) => `${c} = ${param(c)}`).join(', ')}
     where namespace = $1 and entity_path = $2 and key = $3 and version = $${ENTRY_COLUMNS.length + 1}
    returning 1
  )${INSERT_VERSION}`;

/** Where statements run: the pool, or one transaction of the batcher. */
export type Queryable = Sql | postgres.TransactionSql;

/**
 * The compare-and-set statement for one append: one row holding the new version's global
 * sequence number, or no row when the entry's head was not `expectedHead`.
 */
export const appendStatement = (db: Queryable, entry: Entry, expectedHead: number) =>
  expectedHead === 0
    ? db.unsafe<{ seq: string }[]>(CREATE_FIRST, entryParams(entry), { prepare: true })
    : db.unsafe<{ seq: string }[]>(ADVANCE, [...entryParams(entry), expectedHead], { prepare: true });

/** The entry's head version now (0 = never written), for the VersionConflict of a lost race. */
export const currentVersion = async (sql: Sql, a: EntryAddress): Promise<number> => {
  const rows = await sql<{ version: number }[]>`
    select version from cairn_heads
     where namespace = ${a.namespace} and entity_path = ${a.entity_path} and key = ${a.key}`;
  return rows[0]?.version ?? 0;
};

/**
 * Appends `entry` in its own transaction if the entry's head is still `expectedHead`,
 * returning the version's global sequence number; otherwise throws VersionConflict with the
 * version found.
 */
export const appendEntry = async (sql: Sql, entry: Entry, expectedHead: number): Promise<number> => {
  let rows: { seq: string }[];
  try {
    rows = await appendStatement(sql, entry, expectedHead);
  } catch (error) {
    // Only reachable if the versions table holds a version the head row does not know of
    // (edited by hand): the primary key still refuses a second version N.
    if (!isUniqueViolation(error)) throw error;
    rows = [];
  }
  const seq = rows[0]?.seq;
  if (seq === undefined) throw new VersionConflict(await currentVersion(sql, entry));
  return Number(seq);
};
