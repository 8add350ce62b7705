import type { ParsedQuery, SearchFilter } from '../../ports/search-index.ts';
import { idf, termScore, worthExpanding } from '../../search-rules/bm25.ts';
import { TopK } from '../../search-rules/top-k.ts';
import type { Sql } from './client.ts';
import { filterSql } from './search-sql.ts';
import type { SearchStats } from './search-stats.ts';
import { tfReader, tsqueryOf } from './search-terms.ts';

export interface KeyRow {
  namespace: string;
  entity_path: string;
  key: string;
  version: number;
}

/** Rows ts_rank preselects for BM25 to rank: GIN finds matches, BM25 orders them. */
const PRESELECT = 400;
/** Rows the candidate terms may match before commoner terms are left to BM25 alone. */
const CANDIDATE_BUDGET = 5_000;

/**
 * The terms to find candidates by: the rarest first, until they match about
 * CANDIDATE_BUDGET rows. Words that occur everywhere would make the database rank most of
 * the table; they still count in BM25 for the candidates found, and an entry matching only
 * them could hardly have outranked those (their idf is near zero).
 */
const selective = (terms: string[], stats: SearchStats): string[] => {
  const byRarity = terms.map((t) => ({ t, df: stats.docFrequency(t) })).sort((a, b) => a.df - b.df);
  const chosen: string[] = [];
  let rows = 0;
  for (const { t, df } of byRarity) {
    if (chosen.length > 0 && rows + df > CANDIDATE_BUDGET) break;
    chosen.push(t);
    rows += df;
  }
  return chosen;
};

/**
 * The `n` best rows for a query by BM25F: matches found through the GIN index and preselected
 * by ts_rank (which knows no word rarity), then scored here from each row's tsvector with the
 * document frequencies of SearchStats — the formula the in-process index uses.
 */
export const rankText = async (sql: Sql, stats: SearchStats, query: ParsedQuery, filter: SearchFilter, n: number): Promise<{ key: KeyRow; score: number }[]> => {
  await stats.current();
  const expansions = new Map<string, number>();
  for (const { term, weight } of query.expansions ?? []) {
    if (!query.terms.includes(term) && worthExpanding(stats.docFrequency(term), stats.docCount)) expansions.set(term, weight);
  }
  const tsquery = tsqueryOf({ ...query, terms: [...selective(query.terms, stats), ...selective([...expansions.keys()], stats)] });
  if (!tsquery) return [];
  const f = filterSql(filter, 2);
  // The tsvector becomes text for the preselected rows only: in a single select, PostgreSQL
  // converts it for every matching row before sorting (thousands for a common word).
  // ts_rank without length normalization (0): BM25 weighs length itself once the rows are
  // here. At 100k entries of the bench corpus (many near-copies, as repeated alerts make), the
  // top 10 held 62 % of the exact BM25 top 10 (near-copies counted as one) with log-length
  // normalization and 71.5 % without, at the same cost; with lengths from 18 to 345 words,
  // 73.5 % and 73.2 %.
  const rows = await sql.unsafe<(KeyRow & { terms: string; doc_length: number })[]>(
    `select namespace, entity_path, key, version, terms::text as terms, doc_length from (
       select namespace, entity_path, key, version, terms, doc_length, ts_rank('{0.1, 0.6, 0.4, 0.6}', terms, $1::tsquery, 0) as rank
         from cairn_search where terms @@ $1::tsquery and ${f.where}
        order by rank desc limit ${PRESELECT}) best
      order by rank desc`,
    [tsquery, ...f.values],
  );
  const docs = Math.max(stats.docCount, rows.length, 1);
  const weights = new Map(query.terms.map((t) => [t, idf(stats.docFrequency(t), docs)]));
  for (const [term, scale] of expansions) weights.set(term, scale * idf(stats.docFrequency(term), docs));
  // Expansion terms score too (weighted above), so the rows' counts must include them.
  const countsOf = tfReader([...query.terms, ...expansions.keys()], query.prefixes.flat());
  const top = new TopK(n);
  rows.forEach((row, i) => {
    let score = 0;
    for (const [term, tf] of countsOf(row.terms)) {
      const weight = weights.get(term) ?? idf(stats.docFrequency(term), docs);
      if (weight > 0) score += termScore(weight, tf, row.doc_length, stats.averageLength);
    }
    top.push(i, score);
  });
  return top.sorted().map((b) => ({ key: rows[b.slot] as KeyRow, score: b.score }));
};
