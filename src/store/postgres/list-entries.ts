import type { ListPage, ListQuery } from '../../ports/store.ts';
import type { Sql } from './client.ts';
import { type EntryRow, rowToEntry, selectEntryColumns } from './entry-row.ts';

const COLUMNS = selectEntryColumns('v');

/**
 * Paths under a segment-wise prefix p are p itself and p/…; under COLLATE "C" all of them
 * sort inside [p, p || '0') ('0' is the byte after '/'), so the prefix is an index range on
 * the heads primary key rather than a LIKE, which needs no escaping of % and _ and stays a
 * range scan under generic prepared plans. The extra condition drops siblings that sort
 * inside the range, such as `p-corp` or `p.old` ('-' and '.' sort before '/').
 */
const prefixRange = (sql: Sql, prefix: string | undefined) =>
  prefix === undefined
    ? sql``
    : sql`and h.entity_path >= ${prefix} and h.entity_path < ${`${prefix}0`}
          and (h.entity_path = ${prefix} or h.entity_path >= ${`${prefix}/`})`;

/**
 * One indexed query: walk cairn_heads in (namespace, entity_path, key) order from the
 * cursor, filter on the columns heads carry, and join the version rows of the page only.
 * One row beyond `limit` tells whether another page exists without a count.
 */
export const listEntries = async (sql: Sql, q: ListQuery): Promise<ListPage> => {
  const rows = await sql<EntryRow[]>`
    select ${sql.unsafe(COLUMNS)}
      from cairn_heads h
      join cairn_versions v
        on v.namespace = h.namespace and v.entity_path = h.entity_path
       and v.key = h.key and v.version = h.version
     where h.namespace = ${q.namespace}
       ${prefixRange(sql, q.prefix)}
       ${q.after ? sql`and (h.entity_path, h.key) > (${q.after.entity_path}, ${q.after.key})` : sql``}
       and not h.deleted
       and (h.expires_at is null or h.expires_at > ${new Date(q.now).toISOString()})
       ${q.agentId === undefined ? sql`` : sql`and h.agent_id = ${q.agentId}`}
       ${q.since === undefined ? sql`` : sql`and h.written_at >= ${q.since}`}
     order by h.entity_path, h.key
     limit ${q.limit + 1}`;
  const entries = rows.slice(0, q.limit).map(rowToEntry);
  const last = entries.at(-1);
  const next = rows.length > q.limit && last ? { entity_path: last.entity_path, key: last.key } : null;
  return { entries, next };
};
