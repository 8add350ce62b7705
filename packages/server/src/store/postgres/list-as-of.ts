import type { ListPage, ListQuery } from '../../ports/store.ts';
import type { Sql } from './client.ts';
import { ENTRY_COLUMNS, type EntryRow, rowToEntry, selectEntryColumns } from './entry-row.ts';
import { paramList, placeWhere } from './list-entries.ts';

const COLUMNS = selectEntryColumns('v');

/**
 * A list page as of a past instant: walk cairn_heads in (entity_path, key) order from the
 * cursor as `listEntries` does, and for each entry take the newest version written by then
 * (the lateral walks that key's versions down the primary key from the newest, so an entry
 * unchanged since costs one index probe, and one created later yields no row). Liveness and
 * filters apply to that version. The nested loop stops once the page and one more row are
 * found, so a page costs the entries walked, not the namespace.
 */
export const listEntriesAsOf = async (sql: Sql, q: ListQuery & { asOf: number }): Promise<ListPage> => {
  const { values, p } = paramList();
  const outer = ['not v.deleted', `(v.expires_at is null or v.expires_at > ${p(new Date(q.now).toISOString())})`];
  if (q.agentId !== undefined) outer.push(`v.agent_id = ${p(q.agentId)}`);
  if (q.since !== undefined) outer.push(`v.written_at >= ${p(q.since)}`);
  const heads = [`h.namespace = ${p(q.namespace)}`, ...placeWhere(q, p)];
  const at = p(new Date(q.asOf).toISOString());
  const text = `
    select ${COLUMNS}
      from cairn_heads h
     cross join lateral (
            select ${ENTRY_COLUMNS.join(', ')} from cairn_versions x
             where x.namespace = h.namespace and x.entity_path = h.entity_path
               and x.key = h.key and x.written_at <= ${at}::timestamptz
             order by x.version desc
             limit 1) v
     where ${heads.join(' and ')} and ${outer.join(' and ')}
     order by h.entity_path, h.key
     limit ${p(q.limit + 1)}`;
  const rows = await sql.unsafe<EntryRow[]>(text, values, { prepare: false });
  const entries = rows.slice(0, q.limit).map(rowToEntry);
  const last = entries.at(-1);
  const next = rows.length > q.limit && last ? { entity_path: last.entity_path, key: last.key } : null;
  return { entries, next };
};
