import type { Sql } from './client.ts';

/**
 * Every namespace of cairn_heads, each once, in code point order: a loose index scan (a
 * recursive walk of the primary key's first column, one index probe per namespace), so its
 * cost follows the namespaces, not the entries. A plain DISTINCT would read every head.
 */
export const readNamespaces = async (sql: Sql): Promise<string[]> => {
  const rows = await sql<{ namespace: string }[]>`
    with recursive ns(namespace) as (
      (select namespace from cairn_heads order by namespace limit 1)
      union all
      select (select h.namespace from cairn_heads h where h.namespace > ns.namespace order by h.namespace limit 1)
        from ns where ns.namespace is not null)
    select namespace from ns where namespace is not null`;
  return rows.map((row) => row.namespace);
};
