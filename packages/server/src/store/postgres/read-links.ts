import type { Entry, EntryAddress } from '../../domain/entry.ts';
import type { Sql } from './client.ts';
import { type EntryRow, rowToEntry, selectEntryColumns } from './entry-row.ts';

const COLUMNS = selectEntryColumns('v');
/** Sources read per target: a hub entry linked from everywhere must not pull the whole table. */
const MAX_SOURCES = 1000;

/**
 * Heads that link to `target`: the GIN index (008_links.sql) finds every version whose links
 * contain it, and the join keeps the ones that are their entry's newest version.
 */
export const readLinkedTo = async (sql: Sql, target: EntryAddress): Promise<Entry[]> => {
  const rows = await sql<EntryRow[]>`
    select ${sql.unsafe(COLUMNS)} from cairn_versions v
      join cairn_heads h on h.namespace = v.namespace and h.entity_path = v.entity_path and h.key = v.key and h.version = v.version
     where v.namespace = ${target.namespace} and v.links @> ${sql.json([{ entity_path: target.entity_path, key: target.key }])}
     limit ${MAX_SOURCES}`;
  return rows.map(rowToEntry);
};
