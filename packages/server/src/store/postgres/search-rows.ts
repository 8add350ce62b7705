import type postgres from 'postgres';
import type { Entry } from '../../domain/entry.ts';
import type { Sql } from './client.ts';
import { type EntryRow, rowToEntry, selectEntryColumns } from './entry-row.ts';
import { ANALYSIS_VERSION } from '../../search-rules/analyzer.ts';
import { textStamp, tsvectorOf } from './search-terms.ts';
import { vectorLiteral } from './search-vectors.ts';
import { compareAddresses } from '../../domain/order.ts';

export interface SearchRow {
  entry: Entry;
  /** A vector from `embedder`, or none yet. */
  vector?: Float32Array;
  embedder?: string;
}

const COLUMNS = selectEntryColumns('v');

const SHAPE = `namespace text, entity_path text, key text, version int, agent_id text, event_type text, confidence float8,
  written_at timestamptz, expires_at timestamptz, terms text, doc_length real, text_stamp text, embedder text, embedding text`;

/**
 * Write the search rows of live heads in one statement. A row only moves forward: an older
 * version arriving late (another replica, a catch-up) leaves a newer row alone, and a new
 * version without a vector clears the old one's, which described other content. The append
 * itself writes each version's row without a vector (append-entry.ts), so for this
 * replica's writes and every other's this adds the vector, and otherwise (versions written
 * by an older server, found by the sweep) the whole row. A row of the same version that an
 * older analysis made (ANALYSIS_VERSION) gets the new terms and keeps its vector when no new
 * one is given: the content is the same, and a remote embedder would be asked again for every
 * row. Its text stamp is then cleared: its terms are of the value as read back (in jsonb's key
 * order), its vector perhaps of the value as written, so a later version keeps neither.
 */
export const upsertSearchRows = async (sql: Sql, rows: SearchRow[], withVectors: boolean): Promise<void> => {
  if (rows.length === 0) return;
  const json = JSON.stringify(
    rows.map(({ entry: e, vector, embedder }) => {
      const { literal, length } = tsvectorOf(e);
      return {
        namespace: e.namespace, entity_path: e.entity_path, key: e.key, version: e.version, agent_id: e.agent_id, event_type: e.event_type,
        confidence: e.confidence, written_at: e.written_at, expires_at: e.expires_at, terms: literal, doc_length: length,
        text_stamp: `${e.version}:${textStamp(e)}`,
        embedder: vector ? (embedder ?? null) : null, embedding: vector ? vectorLiteral(vector) : null,
      };
    }),
  );
  const vectorColumn = withVectors ? ', embedding' : '';
  const vectorValue = withVectors ? ', r.embedding::vector' : '';
  // Same version, no new vector: only the terms are new (another analysis); the vector stands.
  const keep = (column: string) =>
    `${column} = case when cairn_search.version = excluded.version and excluded.embedder is null then cairn_search.${column} else excluded.${column} end`;
  const vectorUpdate = withVectors ? `, ${keep('embedding')}` : '';
  // The append wrote this version's row without a vector; a vector for it may fill it in.
  const vectorFill = withVectors
    ? ' or (cairn_search.version = excluded.version and excluded.embedder is not null and cairn_search.embedder is distinct from excluded.embedder)'
    : '';
  await sql.unsafe(
    `insert into cairn_search (namespace, entity_path, key, version, agent_id, event_type, confidence, written_at, expires_at, terms, doc_length, text_stamp, embedder, analysis${vectorColumn})
     select r.namespace, r.entity_path, r.key, r.version, r.agent_id, r.event_type, r.confidence, r.written_at, r.expires_at,
            r.terms::tsvector, r.doc_length, r.text_stamp, r.embedder, ${ANALYSIS_VERSION}${vectorValue}
       from json_to_recordset($1::text::json) as r(${SHAPE})
       -- Only while the head still names this version: a forgotten entry (head deleted) must
       -- not come back through a late upsert, and the lock makes a forget under way wait.
       join cairn_heads h on h.namespace = r.namespace and h.entity_path = r.entity_path and h.key = r.key and h.version = r.version
        for share of h
     on conflict (namespace, entity_path, key) do update set
       version = excluded.version, agent_id = excluded.agent_id, event_type = excluded.event_type, confidence = excluded.confidence,
       written_at = excluded.written_at, expires_at = excluded.expires_at, terms = excluded.terms, doc_length = excluded.doc_length,
       text_stamp = case when cairn_search.version = excluded.version and excluded.embedder is null then null else excluded.text_stamp end,
       analysis = excluded.analysis, ${keep('embedder')}${vectorUpdate}
     where cairn_search.version < excluded.version
        or (cairn_search.version = excluded.version and cairn_search.analysis < excluded.analysis)${vectorFill}`,
    [json],
  );
};

/**
 * Give the rows of announced versions their vectors. The append wrote each version's row,
 * text and all, in its own commit (append-entry.ts), so only the embedder and the vector
 * change: no text is analysed again in the application and no terms are sent. A row that
 * holds a newer version by now, or none (deleted, forgotten), is left alone, as is one that
 * has this embedder's vector already (another replica gave it). Rows are sent in address
 * order, the order every batch of appends takes its locks in, so that replicas filling the
 * same rows mostly lock them alike; a batch that fails all the same (a deadlock, a lost
 * connection) is left to the embedding backlog, which gives every row without this
 * embedder's vector one (search-backlog.ts).
 */
export const fillVectors = async (sql: Sql, rows: readonly { entry: Entry; vector: Float32Array; embedder: string }[]): Promise<void> => {
  if (rows.length === 0) return;
  const sorted = [...rows].sort((a, b) => compareAddresses(a.entry, b.entry));
  const json = JSON.stringify(
    sorted.map(({ entry: e, vector, embedder }) => ({ namespace: e.namespace, entity_path: e.entity_path, key: e.key, version: e.version, embedder, embedding: vectorLiteral(vector) })),
  );
  await sql.unsafe(
    `update cairn_search s set embedder = r.embedder, embedding = r.embedding::vector
       from json_to_recordset($1::text::json) as r(namespace text, entity_path text, key text, version int, embedder text, embedding text)
      where s.namespace = r.namespace and s.entity_path = r.entity_path and s.key = r.key and s.version = r.version
        and s.embedder is distinct from r.embedder`,
    [json],
  );
};

/** Of `entries`, those whose search row holds that very version with `embedder`'s vector. */
export const withVectorOf = async (sql: Sql, entries: readonly Entry[], embedder: string): Promise<Set<Entry>> => {
  const json = JSON.stringify(entries.map(({ namespace, entity_path, key, version }, i) => ({ namespace, entity_path, key, version, i })));
  const rows = await sql.unsafe<{ i: number }[]>(
    `select r.i from json_to_recordset($1::text::json) as r(namespace text, entity_path text, key text, version int, i int)
       join cairn_search s on s.namespace = r.namespace and s.entity_path = r.entity_path and s.key = r.key
                          and s.version = r.version and s.embedder = $2`,
    [json, embedder],
    { prepare: true },
  );
  return new Set(rows.map(({ i }) => entries[i] as Entry));
};

/** Remove the rows of entries deleted at `version` (rows of older versions only). */
export const deleteSearchRows = async (sql: Sql, tombstones: Entry[]): Promise<void> => {
  if (tombstones.length === 0) return;
  const json = JSON.stringify(tombstones.map((e) => ({ namespace: e.namespace, entity_path: e.entity_path, key: e.key, version: e.version })));
  await sql.unsafe(
    `delete from cairn_search s using json_to_recordset($1::text::json) as r(namespace text, entity_path text, key text, version int)
      where s.namespace = r.namespace and s.entity_path = r.entity_path and s.key = r.key and s.version < r.version`,
    [json],
  );
};

/** Entries by exact version, in the order asked (missing ones left out). */
export const readVersions = async (sql: Sql | postgres.TransactionSql, ids: { namespace: string; entity_path: string; key: string; version: number }[]): Promise<Entry[]> => {
  if (ids.length === 0) return [];
  const rows = await sql.unsafe<(EntryRow & { ord: number })[]>(
    `select ${COLUMNS}, r.ord from json_to_recordset($1::text::json) as r(namespace text, entity_path text, key text, version int, ord int)
       join cairn_versions v on v.namespace = r.namespace and v.entity_path = r.entity_path and v.key = r.key and v.version = r.version
      order by r.ord`,
    // The address and version only: callers pass rows that carry more (a text candidate its
    // tsvector's text, ~470 bytes), which would go to the database and be parsed there.
    [JSON.stringify(ids.map(({ namespace, entity_path, key, version }, ord) => ({ namespace, entity_path, key, version, ord })))],
    // The text never changes: prepared once per connection, each read is one round trip (the
    // driver describes an unprepared statement with parameters before running it: two).
    { prepare: true },
  );
  return rows.map(rowToEntry);
};

/**
 * Heads after `after` (in primary key order, one page of `limit` heads) that have no search
 * row, or an older one (written while no indexer ran, or lost with a crash between commit and
 * indexing), or one whose terms an older analysis made (ANALYSIS_VERSION), and deleted heads
 * that still have one. Paging by key keeps a full sweep linear. `vectorOf`: the embedder whose
 * vector a stale head's row holds for that very version (only its terms are stale).
 */
/** A head whose search row is missing, of an older version or analysis, or left over after a delete. */
const STALE = `((not h.deleted and (s.version is null or s.version < h.version or s.analysis < ${ANALYSIS_VERSION})) or (h.deleted and s.version is not null))`;

export const staleHeads = async (
  sql: Sql,
  after: { namespace: string; entity_path: string; key: string } | null,
  limit: number,
): Promise<{ stale: Entry[]; vectorOf: Map<Entry, string>; last: { namespace: string; entity_path: string; key: string } | null }> => {
  const from = after ?? { namespace: '', entity_path: '', key: '' };
  const rows = await sql.unsafe<(EntryRow & { h_namespace: string; h_entity_path: string; h_key: string; stale: boolean; row_embedder: string | null })[]>(
    `select h.namespace as h_namespace, h.entity_path as h_entity_path, h.key as h_key,
            case when s.version = h.version then s.embedder end as row_embedder,
            ${STALE} as stale, ${COLUMNS}
       from (select * from cairn_heads where (namespace, entity_path, key) > ($1, $2, $3)
              order by namespace, entity_path, key limit ${Math.trunc(limit)}) h
       left join cairn_search s on s.namespace = h.namespace and s.entity_path = h.entity_path and s.key = h.key
       left join cairn_versions v on v.namespace = h.namespace and v.entity_path = h.entity_path and v.key = h.key and v.version = h.version
                                 and ${STALE}
      order by h.namespace, h.entity_path, h.key`,
    [from.namespace, from.entity_path, from.key],
  );
  const last = rows.at(-1);
  const vectorOf = new Map<Entry, string>();
  const stale = rows.filter((r) => r.stale).map((r) => {
    const entry = rowToEntry(r);
    if (r.row_embedder !== null) vectorOf.set(entry, r.row_embedder);
    return entry;
  });
  return {
    stale,
    vectorOf,
    last: rows.length < limit || !last ? null : { namespace: last.h_namespace, entity_path: last.h_entity_path, key: last.h_key },
  };
};
