/**
 * BM25 (Robertson–Spärck Jones, Lucene's variant of idf) over field-weighted term
 * frequencies (BM25F). Shared by every backend so that one query ranks alike everywhere.
 */
export const K1 = 1.2;
export const B = 0.75;

/** Inverse document frequency: rare terms say more. Never negative. */
export const idf = (docFrequency: number, docCount: number): number =>
  Math.log(1 + (docCount - docFrequency + 0.5) / (docFrequency + 0.5));

/** Contribution of a term with weighted frequency `tf` to a document of weighted length `length`. */
export const termScore = (termIdf: number, tf: number, length: number, averageLength: number): number => {
  const norm = K1 * (1 - B + (B * length) / (averageLength || 1));
  return (termIdf * tf * (K1 + 1)) / (tf + norm);
};

/**
 * termScore's parts that depend on the collection only (`norm = base + perLength × length`),
 * for a scan of many postings at one average length: found once, they leave one division per
 * posting instead of three. Equal to termScore up to rounding in the last bits.
 */
export const lengthNorm = (averageLength: number): { base: number; perLength: number } => ({ base: K1 * (1 - B), perLength: (K1 * B) / (averageLength || 1) });

/**
 * The most BM25 can give a document for `terms` in a collection: each term's limit as its
 * frequency grows, idf × (K1 + 1), summed. A term no document holds counts at its idf as an
 * unseen word: the query asked for it and nothing here has it.
 */
export const queryCeiling = (terms: Iterable<string>, docFrequency: (term: string) => number, docCount: number): number => {
  let ceiling = 0;
  for (const term of new Set(terms)) ceiling += idf(docFrequency(term), docCount) * (K1 + 1);
  return ceiling;
};

/** Statistics of the collection a score is computed against. */
export interface CollectionStats {
  docCount: number;
  averageLength: number;
  docFrequency(term: string): number;
}

/**
 * Whether a query expansion term is worth its postings: one found in more than a tenth of the
 * entries adds little (low idf, scaled down again as an expansion) and costs a long scan. A
 * term in at most EXPANSION_FLOOR entries always is: its scan is short, and in a small store (a
 * new one, or an `as_of` search's scope) a tenth of the entries would leave out every
 * expansion there is — "purchase" would never answer "buy" in a store of ten entries.
 */
const EXPANSION_FLOOR = 50;
export const worthExpanding = (docFrequency: number, docCount: number): boolean => docFrequency <= Math.max(docCount * 0.1, EXPANSION_FLOOR);
