import type { ParsedQuery, SearchFilter } from '../../ports/search-index.ts';
import { idf, termScore, worthExpanding } from '../../search-rules/bm25.ts';
import { TopK } from '../../search-rules/top-k.ts';
import type { Sql } from './client.ts';
import { filterSql } from './search-sql.ts';
import type { NamespaceStats, SearchStats } from './search-stats.ts';
import { tfReader, tsqueryOf, tsqueryOfTerm } from './search-terms.ts';

export interface KeyRow {
  namespace: string;
  entity_path: string;
  key: string;
  version: number;
}

/**
 * Rows preselected in the database for BM25 to rank here, per candidate asked for (50 for a
 * search of 10). Each row comes back as its tsvector's text (about 470 bytes; PostgreSQL
 * converts it for each, about 5 µs a row), and BM25 then reads it here. With the preselection
 * weighted by rarity, 4 held as much of the exact ranking as 8 did (0.883 – 0.983 against
 * 0.878 – 0.983 at 2,000 rows, below); after the two statements (rankText), at 100k bench
 * entries, 202 queries, `rankText` alone, as the share of the top-10 BM25 score of every
 * matching row ranked: 4 per candidate 0.951, text p50 / p95 9.2–9.8 / 15.4–17.1 ms; 3 0.951,
 * 8.1–8.5 / 13.8–15.1; 2 0.950, 7.5–8.2 / 12.6–14.3. No evaluation figure fell at 2 (one
 * conversational question rose).
 */
const PRESELECT_PER_CANDIDATE = 2;
/**
 * Rows the candidate terms of each group (the query's, the expansions') may match before
 * commoner terms are left to BM25 alone. Measured at 100k entries of the bench corpus, 202
 * queries, 400 rows preselected, against the in-process index's exact BM25F top 10 (the share
 * of its summed score that the top 10 here hold, counting a pick outside the exact top 100 as
 * 0 – as the 100th score there), with text and hybrid p50 / p95 one query at a time:
 *
 *   5,000, ts_rank unweighted (before)  0.827 – 0.973   text 17.5 / 30.4 ms   hybrid 20.1 / 35.9 ms
 *   5,000, weighted                     0.957 – 0.991   text 17.9 / 34.5      hybrid 21.4 / 40.9
 *   2,500, weighted                     0.898 – 0.985   text 13.5 / 21.8      hybrid 17.4 / 27.2
 *   2,000, weighted                     0.878 – 0.983   text 12.6 / 20.8      hybrid 15.5 / 25.2
 *   1,500, weighted                     0.827 – 0.980   text 11.0 / 17.7      hybrid 13.7 / 22.8
 *
 * Nearly all of a search's time is the database reading the matching rows, so the budget is
 * the lever; 2,000 ranks better than the unweighted 5,000 did, in two thirds of the time (and
 * with 200 rows preselected: text 11.4 / 20.6 ms, hybrid 15.0 / 24.1 ms).
 */
const CANDIDATE_BUDGET = 2_000;

/**
 * Rows the rarest expansion terms may match to be read beside the query's own (rankText's
 * lift). Measured at 100k bench entries, 202 queries, text one query at a time, against the
 * in-process index's exact BM25F over the same rows (the share of its top 10's summed score;
 * the share of its top-10 entries found), p50 / p95:
 *
 *   before (no lift, ties in table order)          0.983  0.625   5.9 / 9.1–9.4 ms
 *   ties shortest first, no lift                   0.983  0.803   6.2–6.3 / 9.1–9.2
 *   and a lift of 250 rows ranked by expansions    0.983  0.803   6.3–6.6 / 9.1–10.1
 *   a second statement, 1,000 rows, every term     0.985  0.818   8.5 / 12.9
 *   a second statement, 2,000 rows, every term     0.986  0.838   9.2–9.4 / 16.6–17.0
 *
 * The bench's expansions are common words, so few fit 250 rows and the lift finds little
 * there; in a conversation they are the rare words that matter (conversational evaluation,
 * text recall@5: 0.679 without, 0.696 with it, as in the in-process index).
 */
const LIFT_BUDGET = 250;

/**
 * The terms to find candidates by: the rarest first, until they match about `budget` rows.
 * Words that occur everywhere would make the database rank most of the table; they still
 * count in BM25 for the candidates found, and an entry matching only them could hardly have
 * outranked those (their idf is near zero). The rarest is taken even past the budget unless
 * `strict`.
 */
const selective = (terms: string[], stats: NamespaceStats, budget = CANDIDATE_BUDGET, strict = false): string[] => {
  const byRarity = terms.map((t) => ({ t, df: stats.docFrequency(t) })).sort((a, b) => a.df - b.df);
  const chosen: string[] = [];
  let rows = 0;
  for (const { t, df } of byRarity) {
    if ((chosen.length > 0 || strict) && rows + df > budget) break;
    chosen.push(t);
    rows += df;
  }
  return chosen;
};

/**
 * The preselection's rank: each of the query's own terms' ts_rank alone, weighted by its BM25
 * weight (idf). ts_rank of a whole query knows no word rarity: it put the rows that repeat a
 * common word ahead of those holding the rare one, and a rare word's few matches could miss
 * the preselection behind hundreds of a common word's. A term's ts_rank alone grows with its
 * frequency and levels off, as BM25's term score does; ts_rank does no length normalization
 * here (0), which BM25 does once the rows are here. Prefixes weigh as rare terms.
 *
 * Expansion terms score in BM25 here, but do not rank the rows holding the query's own words
 * (rankText's first statement): each term costs PostgreSQL one ts_rank call per matching row (about 0.1 µs,
 * the statement's largest cost), and a query has about three expansions per word. Measured
 * at 100k entries of the bench corpus, 202 queries, against BM25 over every row any term
 * matches (the share of that top 10's summed score): every term ranking 0.963, text p50 / p95
 * 11.4–12.5 / 23.7–26.5 ms; the query's own terms 0.961, 9.8–11.0 / 20.1–20.8 ms.
 * Parameters are numbered from `first`.
 */
const rarityRank = (weights: Map<string, number>, prefixes: string[], prefixWeight: number, first: number): { sql: string; values: string[] } => {
  const values: string[] = [];
  const parts: string[] = [];
  const add = (tsquery: string, weight: number): void => {
    if (weight <= 0) return;
    values.push(tsquery);
    parts.push(`${weight.toFixed(6)} * ts_rank('{0.1, 0.6, 0.4, 0.6}', terms, $${first + values.length - 1}::tsquery, 0)`);
  };
  for (const [term, weight] of weights) add(tsqueryOfTerm(term), weight);
  for (const prefix of new Set(prefixes)) add(tsqueryOfTerm(prefix, true), prefixWeight);
  return { sql: parts.length > 0 ? parts.join(' + ') : '0', values };
};

/** One select of rankText's preselection: the `count` best rows matching `tsquery` (and not `unless`) by rarityRank over `weights`. */
interface Part {
  tsquery: string;
  unless?: string | null;
  weights: Map<string, number>;
  prefixes: string[];
  count: number;
}

/** A preselected row: its address, its tsvector as text, its BM25F length, the part that found it. */
type TextRow = KeyRow & { terms: string; doc_length: number; part: number };

/**
 * The `n` best rows for a query by BM25F: matches found through the GIN index and preselected
 * there by rarityRank, then scored here from each row's tsvector with the document
 * frequencies of SearchStats — the formula the in-process index uses.
 *
 * The first statement reads the rows holding the query's own chosen terms, ranked by those,
 * and beside them (the lift) the few best rows holding its rarest expansion terms, ranked by
 * those: a common own word can fill the first part with rows that hold nothing else (a
 * speaker's name on half the turns of a conversation), leaving out every row that holds it
 * with a word related to the question, or holds only that word. A second statement follows
 * only when the own words' rows are fewer than the preselection takes: the rows the expansion
 * terms alone find, ranked by every term. In one statement those rows (up to CANDIDATE_BUDGET
 * of their own) were read and ranked only to come after the others, or to win by a common own
 * word the budget left out of the search. Measured at 100k bench entries, 202 queries, against
 * BM25 over every row any term matches (the share of that top 10's summed score): one
 * statement 0.961, text p50 / p95 9.4–10.4 / 18.7–20.2 ms; two 0.951, 7.5–8.1 / 12.9–13.3 ms.
 * Finding the rows that hold an expansion and a left-out own word in the first statement too
 * (`(expansions) & (left out)`) held 0.961 again, for 9.5–10.6 / 17.2–19.9 ms: what was saved
 * was those rows' ranking.
 */
export const rankText = async (sql: Sql, all: SearchStats, query: ParsedQuery, filter: SearchFilter, n: number): Promise<{ key: KeyRow; score: number }[]> => {
  await all.current();
  // The searched namespace's own figures: another namespace's rows move nothing here.
  const stats = all.of(filter.namespace);
  const expansions = new Map<string, number>();
  // A related word the query's own prefix matches (`physic*` beside "doctor", which expands to
  // "physician") is the caller's own word, at its full weight, as the in-process index weighs it.
  const prefixed = (term: string): boolean => query.prefixes.some((group) => group.some((p) => term.startsWith(p)));
  for (const { term, weight } of query.expansions ?? []) {
    if (!query.terms.includes(term) && !prefixed(term) && worthExpanding(stats.docFrequency(term), stats.docCount)) expansions.set(term, weight);
  }
  const own = tsqueryOf({ ...query, terms: selective(query.terms, stats) });
  const expanded = tsqueryOf({ ...query, terms: selective([...expansions.keys()], stats), prefixes: [] });
  const lift = tsqueryOf({ ...query, terms: selective([...expansions.keys()], stats, LIFT_BUDGET, true), prefixes: [] });
  if (!own && !expanded) return [];
  const f = filterSql(filter, 1);
  const ownWeights = (docs: number): Map<string, number> => new Map(query.terms.map((t) => [t, idf(stats.docFrequency(t), docs)]));
  const expansionWeights = (docs: number): Map<string, number> => new Map([...expansions].map(([t, scale]) => [t, scale * idf(stats.docFrequency(t), docs)]));
  const weightsAt = (docs: number): Map<string, number> => new Map([...ownWeights(docs), ...expansionWeights(docs)]);
  const limit = PRESELECT_PER_CANDIDATE * Math.trunc(n);
  const docCount = Math.max(stats.docCount, 1);
  const seen = new Set<string>();
  /**
   * The parts' rows in one statement, each part's in its rank order, less the rows found
   * before (by this statement or an earlier one); the filter's parameters (from $1) serve every
   * part. Rows of equal rank (holding the same words as often) go shortest first, as BM25 would
   * rank them, then by address, so which of them make the cut does not depend on where each
   * lies in the table.
   */
  const preselect = async (parts: Part[]): Promise<TextRow[]> => {
    const values: unknown[] = [...f.values];
    const param = (value: unknown): string => `$${values.push(value)}`;
    const selects = parts.map((p, i) => {
      const match = `terms @@ ${param(p.tsquery)}::tsquery${p.unless ? ` and not (terms @@ ${param(p.unless)}::tsquery)` : ''}`;
      const rank = rarityRank(p.weights, p.prefixes, idf(1, docCount), values.length + 1);
      values.push(...rank.values);
      return `(select ${i} as part, namespace, entity_path, key, version, terms, doc_length, ${rank.sql} as rank
          from cairn_search where ${match} and ${f.where}
         order by rank desc, doc_length, entity_path, key limit ${p.count})`;
    });
    // The tsvector becomes text for the preselected rows only: in a single select, PostgreSQL
    // converts it for every matching row before sorting (thousands for a common word).
    const rows = await sql.unsafe<TextRow[]>(
      `select part, namespace, entity_path, key, version, terms::text as terms, doc_length
         from (${selects.join(' union all ')}) best
        order by part, rank desc, doc_length, entity_path, key`,
      values as string[],
    );
    return rows.filter((r) => {
      const id = `${r.namespace}\u0000${r.entity_path}\u0000${r.key}`;
      if (seen.has(id)) return false;
      seen.add(id);
      return true;
    });
  };
  const parts: Part[] = [];
  if (own) parts.push({ tsquery: own, weights: ownWeights(docCount), prefixes: query.prefixes.flat(), count: limit });
  // The lift is ranked by its expansions alone: ranking by every term too cost a ts_rank call
  // per term and row (text p50 +0.2 ms at 100k) and found the same rows.
  if (own && lift) parts.push({ tsquery: lift, weights: expansionWeights(docCount), prefixes: [], count: n });
  let rows = parts.length > 0 ? await preselect(parts) : [];
  const ownRows = rows.filter((r) => r.part === 0).length;
  if (ownRows < limit && expanded) {
    rows = [...rows, ...(await preselect([{ tsquery: expanded, unless: own, weights: weightsAt(docCount), prefixes: [], count: limit - ownRows }]))];
  }
  const docs = Math.max(stats.docCount, rows.length, 1);
  const weights = weightsAt(docs);
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
