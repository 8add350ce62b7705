import type { Entry, EntryAddress } from '../../domain/entry.ts';
import type { LinkedToQuery } from '../../ports/store.ts';
import type { Sql } from './client.ts';
import { type EntryRow, rowToEntry, selectEntryColumns, textArrayLiteral } from './entry-row.ts';

const COLUMNS = selectEntryColumns('v');

/**
 * Heads that link to `target`: the GIN index (008_links.sql) finds every version whose links
 * contain it (with the relation asked for), and the join keeps the ones that are their entry's
 * newest version. Liveness and path prefixes are filtered here too, before the cap, so a cap
 * never drops a source the caller would keep for one it would not.
 */
export const readLinkedTo = async (sql: Sql, target: EntryAddress, query: LinkedToQuery = {}): Promise<Entry[]> => {
  if (query.limit !== undefined && query.limit <= 0) return [];
  const link: Record<string, string> = { entity_path: target.entity_path, key: target.key };
  if (query.relation !== undefined) link.relation = query.relation;
  const live =
    query.liveAt === undefined
      ? sql``
      : sql`and not v.deleted and (v.expires_at is null or v.expires_at > ${new Date(query.liveAt).toISOString()}::timestamptz)`;
  const prefixes = query.prefixes ?? null;
  const under =
    prefixes === null
      ? sql``
      : sql`and exists (select 1 from unnest(${textArrayLiteral(prefixes)}::text[]) p where v.entity_path = p or left(v.entity_path, length(p) + 1) = p || '/')`;
  const rows = await sql<EntryRow[]>`
    select ${sql.unsafe(COLUMNS)} from cairn_versions v
      join cairn_heads h on h.namespace = v.namespace and h.entity_path = v.entity_path and h.key = v.key and h.version = v.version
     where v.namespace = ${target.namespace} and v.links @> ${sql.json([link])} ${live} ${under}
     ${query.limit === undefined ? sql`` : sql`limit ${query.limit}`}`;
  return rows.map(rowToEntry);
};
