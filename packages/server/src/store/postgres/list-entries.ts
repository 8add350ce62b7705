import type { ListPage, ListQuery } from '../../ports/store.ts';
import type { Sql } from './client.ts';
import { ENTRY_COLUMNS, selectEntryColumns } from './entry-row.ts';
import { HEAD_COLUMNS, type HeadPageRow, headRowToEntry } from './read-entries.ts';

const COLUMNS = selectEntryColumns('v');

/** Collects positional parameters while the SQL text is assembled. */
export const paramList = () => {
  const values: (string | number)[] = [];
  return { values, p: (value: string | number): string => `$${values.push(value)}` };
};

/** Prefix and cursor conditions on `h` (a heads row): where in the key order a page may lie. */
export const placeWhere = (q: Pick<ListQuery, 'prefix' | 'after'>, p: (value: string | number) => string): string[] => {
  const where: string[] = [];
  if (q.prefix !== undefined) {
    const prefix = p(q.prefix);
    where.push(`h.entity_path >= ${prefix}`, `h.entity_path < ${p(`${q.prefix}0`)}`, `(h.entity_path = ${prefix} or h.entity_path >= ${p(`${q.prefix}/`)})`);
  }
  if (q.after) where.push(`(h.entity_path, h.key) > (${p(q.after.entity_path)}, ${p(q.after.key)})`);
  return where;
};

/**
 * One query: walk cairn_heads in (namespace, entity_path, key) order from the cursor, filter
 * on the columns heads carry, and fetch the versions rows of the page only (the lateral
 * LIMIT 1 keeps the planner from joining the whole versions table). One row beyond `limit`
 * tells whether another page exists without a count. The join is a left one: a head whose
 * version row is missing still counts towards the page (a page is never cut short, and the
 * cursor never taken for the last) and is refused as damage, naming its address.
 *
 * Paths under a segment-wise prefix p are p itself and p/…; under COLLATE "C" they all sort
 * inside [p, p || '0') ('0' is the byte after '/'), so the prefix is a range on the heads
 * primary key rather than a LIKE, which needs no escaping of % and _. The OR drops siblings
 * that sort inside the range, such as `p-corp` or `p.old` ('-' and '.' sort before '/').
 *
 * The statement is not prepared: a generic plan cannot see LIMIT or how selective the
 * filters are, and at a million rows it picks a sequential scan and a sort; a custom plan
 * (about 0.3 ms of planning) walks the index.
 */
export const listEntries = async (sql: Sql, q: ListQuery): Promise<ListPage> => {
  const { values, p } = paramList();
  const where = [`h.namespace = ${p(q.namespace)}`, 'not h.deleted', `(h.expires_at is null or h.expires_at > ${p(new Date(q.now).toISOString())})`];
  where.push(...placeWhere(q, p));
  if (q.agentId !== undefined) where.push(`h.agent_id = ${p(q.agentId)}`);
  if (q.since !== undefined) where.push(`h.written_at >= ${p(q.since)}`);
  const text = `
    select ${HEAD_COLUMNS}, ${COLUMNS}
      from (select namespace, entity_path, key, version from cairn_heads h
             where ${where.join(' and ')}
             order by h.entity_path, h.key
             limit ${p(q.limit + 1)}) h
      left join lateral (
            select ${ENTRY_COLUMNS.join(', ')} from cairn_versions v
             where v.namespace = h.namespace and v.entity_path = h.entity_path
               and v.key = h.key and v.version = h.version
             limit 1) v on true
     order by h.entity_path, h.key`;
  const rows = await sql.unsafe<HeadPageRow[]>(text, values, { prepare: false });
  const entries = rows.slice(0, q.limit).map(headRowToEntry);
  const last = entries.at(-1);
  const next = rows.length > q.limit && last ? { entity_path: last.entity_path, key: last.key } : null;
  return { entries, next };
};
