import type postgres from 'postgres';
import type { Entry, EntryAddress } from '../../domain/entry.ts';
import { VersionConflict } from '../../domain/errors.ts';
import type { Sql } from './client.ts';
import { isUniqueViolation } from './db-errors.ts';
import type { WriteGuard } from './deadline.ts';
import { ENTRY_CASTS, ENTRY_COLUMNS, entryParams } from './entry-row.ts';
import { ANALYSIS_VERSION } from '../../search-rules/analyzer.ts';
import { textStamp, tsvectorOf } from './search-terms.ts';

// $1… follow ENTRY_COLUMNS; then the search row's terms, length and text stamp; the last
// parameter of ADVANCE is the expected head. The head row and the search row reuse the entry's
// parameters.
const param = (column: (typeof ENTRY_COLUMNS)[number]): string => `$${ENTRY_COLUMNS.indexOf(column) + 1}`;
const typed = (column: (typeof ENTRY_COLUMNS)[number]): string => `${param(column)}::${ENTRY_CASTS[column]}`;
const TERMS = `$${ENTRY_COLUMNS.length + 1}`;
const DOC_LENGTH = `$${ENTRY_COLUMNS.length + 2}`;
const STAMP = `$${ENTRY_COLUMNS.length + 3}`;
const EXPECTED_HEAD = `$${ENTRY_COLUMNS.length + 4}`;
const HEAD_VALUES = ['namespace', 'entity_path', 'key', 'version', 'agent_id', 'written_at', 'expires_at', 'deleted'] as const;
const SEARCH_VALUES = ['namespace', 'entity_path', 'key', 'version', 'agent_id', 'event_type', 'confidence', 'written_at', 'expires_at'] as const;
const SAME_ENTRY = `namespace = $1 and entity_path = $2 and key = $3`;

/**
 * Whether the search row being replaced was made from this version's text: its stamp names the
 * row's own version and this version's digest (textStamp), and its terms are of this
 * analysis. Then the row keeps its terms, length and vector (and so its embedder), and only the
 * entry's other columns change: no indexed column, so PostgreSQL can update the row in place.
 */
const SAME_TEXT = `cairn_search.analysis = ${ANALYSIS_VERSION} and cairn_search.text_stamp = cairn_search.version::text || ':' || ${STAMP}::text`;
const keptUnlessNew = (column: string, otherwise: string): string =>
  `${column} = case when ${SAME_TEXT} then cairn_search.${column} else ${otherwise} end`;

/**
 * The version, then its search row (search-rows.ts keeps the same shape), each only if the
 * claim before it succeeded: the row is upserted for a live version and removed for a
 * tombstone, in the same statement and so the same commit, so a write is searchable by text
 * as soon as it is acknowledged, on every replica. A new version's row has no vector yet
 * (embedder null): the indexer or the embedding backlog adds it, unless the version's text is
 * the row's (SAME_TEXT), whose vector it keeps. The statement answers the embedder of the
 * vector the row kept (`kept`, null when it has none), so the indexer need not embed it again.
 */
const INSERT_VERSION = `,
  version as (
    insert into cairn_versions (${ENTRY_COLUMNS.join(', ')})
    select ${ENTRY_COLUMNS.map(typed).join(', ')} from head
    returning seq
  ),
  live as (
    insert into cairn_search (${SEARCH_VALUES.join(', ')}, terms, doc_length, embedder, analysis, text_stamp)
    select ${SEARCH_VALUES.map(typed).join(', ')}, ${TERMS}::tsvector, ${DOC_LENGTH}::real, null, ${ANALYSIS_VERSION},
           ${typed('version')}::text || ':' || ${STAMP}::text
      from version where not ${typed('deleted')}
    on conflict (namespace, entity_path, key) do update set
      ${[...SEARCH_VALUES.slice(3), 'analysis', 'text_stamp'].map((c) => `${c} = excluded.${c}`).join(', ')},
      ${keptUnlessNew('terms', 'excluded.terms')}, ${keptUnlessNew('doc_length', 'excluded.doc_length')}, ${keptUnlessNew('embedder', 'null')}
    where cairn_search.version < excluded.version
    returning embedder
  ),
  gone as (
    delete from cairn_search
     where ${SAME_ENTRY} and version < ${typed('version')} and ${typed('deleted')} and exists (select 1 from version)
  )
  select seq, (select embedder from live) as kept from version`;

/**
 * One statement, hence one round trip and one implicit transaction: claim the head, then
 * insert the version and its search row only if the claim succeeded. The claim is the
 * compare-and-set. Under READ COMMITTED a concurrent claim on the same row makes this
 * statement wait for the other transaction and then re-check its condition against the
 * committed row, so of two racing writers exactly one claims version N and the other claims
 * nothing.
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
     where ${SAME_ENTRY} and version = ${EXPECTED_HEAD}
    returning 1
  )${INSERT_VERSION}`;

/** Where statements run: the pool, or one transaction of the batcher. */
export type Queryable = Sql | postgres.TransactionSql;

/** One append's answer: its global sequence number, and the embedder of the vector its search row kept. */
export interface Appended {
  seq: number;
  /** Set when the version's text was its predecessor's and the row kept that vector. */
  keptEmbedder: string | null;
}

export interface AppendRow {
  seq: string;
  kept: string | null;
}

export const appendedOf = (row: AppendRow): Appended => ({ seq: Number(row.seq), keptEmbedder: row.kept });

/**
 * The compare-and-set statement for one append: one row holding the new version's global
 * sequence number, or no row when the entry's head was not `expectedHead`.
 */
export const appendStatement = (db: Queryable, entry: Entry, expectedHead: number) => {
  // A tombstone's row is removed, not written: its terms are not worth analysing.
  const { literal, length } = entry.deleted ? { literal: '', length: 0 } : tsvectorOf(entry);
  const params = [...entryParams(entry), literal, length, entry.deleted ? '' : textStamp(entry)];
  return expectedHead === 0
    ? db.unsafe<AppendRow[]>(CREATE_FIRST, params, { prepare: true })
    : db.unsafe<AppendRow[]>(ADVANCE, [...params, expectedHead], { prepare: true });
};

/** The entry's head version now (0 = never written), for the VersionConflict of a lost race. */
export const currentVersion = async (sql: Sql, a: EntryAddress): Promise<number> => {
  const rows = await sql<{ version: number }[]>`
    select version from cairn_heads
     where namespace = ${a.namespace} and entity_path = ${a.entity_path} and key = ${a.key}`;
  return rows[0]?.version ?? 0;
};

/**
 * Appends `entry` in its own transaction if the entry's head is still `expectedHead`;
 * otherwise throws VersionConflict with the version found. Under a `guard` (deadline.ts) the
 * statement is cancelled with it, and not sent once it is.
 */
export const appendEntry = async (sql: Sql, entry: Entry, expectedHead: number, guard?: WriteGuard): Promise<Appended> => {
  let rows: AppendRow[];
  try {
    const statement = appendStatement(sql, entry, expectedHead);
    rows = await (guard ? guard.track(statement) : statement);
  } catch (error) {
    // Only reachable if the versions table holds a version the head row does not know of
    // (edited by hand): the primary key still refuses a second version N.
    if (!isUniqueViolation(error)) throw error;
    rows = [];
  }
  const row = rows[0];
  if (row === undefined) throw new VersionConflict(await currentVersion(sql, entry));
  return appendedOf(row);
};
