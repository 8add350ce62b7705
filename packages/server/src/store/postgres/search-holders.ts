import type { SearchFilter } from '../../ports/search-index.ts';
import type { Sql } from './client.ts';
import { filterSql } from './search-sql.ts';
import { tfReader, tsqueryOfTerm } from './search-terms.ts';

/**
 * For each of `terms`, the search rows `filter` lets through that hold it, counted up to
 * `cap`, within what the caller may see, and exact where the search statistics are not (they
 * leave out terms of one row and lag behind writes). One GIN lookup of all the terms together
 * (`a | b | …`): most of a misspelling's ~500 neighbours are held by no row. The rows read are
 * at most `cap` × ROWS_PER_CAP, so where more rows hold some neighbour (a common word one letter
 * from the one typed) the counts are of those rows: a sample, in which the commonest still
 * lead. One subquery a term, exact, cost the planner ~3 ms a term (973 terms: 3.5 s).
 */
const ROWS_PER_CAP = 5;

export const countHolders = async (sql: Sql, terms: readonly string[], filter: SearchFilter, cap: number): Promise<Map<string, number>> => {
  const held = new Map(terms.map((term) => [term, 0]));
  if (terms.length === 0) return held;
  const { where, values } = filterSql(filter, 3);
  const rows = await sql.unsafe<{ terms: string }[]>(`select terms::text as terms from cairn_search where terms @@ $1::tsquery and ${where} limit $2`, [
    terms.map((term) => tsqueryOfTerm(term)).join(' | '),
    cap * ROWS_PER_CAP,
    ...values,
  ]);
  const read = tfReader(terms, []);
  for (const row of rows) for (const [term] of read(row.terms)) held.set(term, Math.min(cap, (held.get(term) ?? 0) + 1));
  return held;
};
