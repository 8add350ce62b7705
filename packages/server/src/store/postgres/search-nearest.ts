import type { Entry } from '../../domain/entry.ts';
import type { Sql } from './client.ts';
import { type EntryRow, rowToEntry, selectEntryColumns } from './entry-row.ts';
import { vectorLiteral } from './search-vectors.ts';

/**
 * The HNSW walk's breadth for `n` candidates. Measured at 100k entries of the bench corpus
 * (built-in embedder, 200 queries, 50 candidates each as a search asks): of the exact 10
 * nearest, the walk found 69 % at 100 (pgvector's default), 78 % at 200, 89 % at 400 and 95 %
 * at 1,000, for 1.1, 1.5, 2.0 and 4.0 ms a query. The in-process index finds 83 %.
 */
export const efSearch = (n: number): number => Math.max(400, Math.min(1000, 8 * Math.trunc(n)));

/**
 * The walk's settings every connection of the search pool starts with (startup parameters,
 * client.ts): those of a search's first round, up to 50 candidates (what a search of 10
 * reads). Its statement then needs no transaction to `set local` them in: `begin`, the `set`
 * and `commit` were a round trip each, beside the statement's two (the driver describes a
 * statement with parameters before running it) and the entries' read after it — six where
 * readNearest makes two. Filters apply after the walk; the iterative scan keeps walking until
 * enough rows pass them. Deeper rounds set their breadth in a transaction, as before.
 */
export const NEAREST_SETTINGS = { 'hnsw.ef_search': efSearch(0), 'hnsw.iterative_scan': 'relaxed_order' } as const;

const COLUMNS = selectEntryColumns('v');

/**
 * The `n` entries whose search rows' vectors are nearest `vector` by the HNSW index, nearest
 * first, each with its cosine distance: the walk over the rows `rows` and `where` (its
 * parameters from $2) let through, and the versions it found read in the same statement (they
 * were a statement of their own after it). A version gone since (forgotten) is left out. The
 * walk's order is only nearly sorted (relaxed_order): the rows are sorted here by distance,
 * ties in the walk's order (`ord`), as they were when its rows came back alone. `sql` is the
 * search pool, whose connections start with NEAREST_SETTINGS (openPostgresSearch).
 */
export const readNearest = async (
  sql: Sql,
  vector: Float32Array,
  dim: number,
  rows: string,
  where: { where: string; values: (string | number)[] },
  n: number,
): Promise<{ entry: Entry; distance: number }[]> => {
  const distance = `embedding::vector(${dim}) <=> $1::vector(${dim})`;
  const statement = `with near as materialized (
      select s.*, (row_number() over ())::int as ord
        from (select namespace, entity_path, key, version, ${distance} as distance from cairn_search
               where ${rows} and ${where.where}
               order by ${distance} limit ${Math.trunc(n)}) s)
    select ${COLUMNS}, near.distance, near.ord from near
      join cairn_versions v on v.namespace = near.namespace and v.entity_path = near.entity_path and v.key = near.key and v.version = near.version`;
  const values = [vectorLiteral(vector), ...where.values];
  const ef = efSearch(n);
  type Row = EntryRow & { distance: number; ord: number };
  const found =
    ef === NEAREST_SETTINGS['hnsw.ef_search']
      ? await sql.unsafe<Row[]>(statement, values)
      : await sql.begin(async (tx) => {
          // Both settings in one simple-protocol message: one round trip fewer per search.
          await tx.unsafe(`set local hnsw.ef_search = ${ef}; set local hnsw.iterative_scan = ${NEAREST_SETTINGS['hnsw.iterative_scan']}`).simple();
          return tx.unsafe<Row[]>(statement, values);
        });
  found.sort((a, b) => a.distance - b.distance || a.ord - b.ord);
  return found.map((row) => ({ entry: rowToEntry(row), distance: row.distance }));
};
