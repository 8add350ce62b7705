import type { ScoreParts } from 'cairn-memory-client';
import type { Entry } from '../domain/entry.ts';
import type { Candidate } from '../ports/search-index.ts';
import { entryMemo } from './entry-memo.ts';

// Where a result's score came from: part of the search answer, declared once, in the client.
export type { ScoreParts };

export interface Ranked {
  entry: Entry;
  score: number;
  parts: ScoreParts;
}

/** Reciprocal rank fusion constant (Cormack et al. 2009): damps the head of each list. */
const RRF_K = 60;
const RECENCY_HALF_LIFE_DAYS = 30;
const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

/**
 * Age counts from the start of the hour an entry was written: entries written together (an
 * import, a conversation's turns) weigh exactly alike, so equal relevance ties and the address
 * decides, on every backend, not whichever write happened to commit a millisecond later.
 * Parsing the date took about a quarter of fusing in a profile at 10k entries (135 ns a
 * candidate, against 8 ns kept), and the same candidates come back search after search. A
 * number costs the memo one unit of its budget, which then holds millions of them.
 */
const writtenHour = entryMemo((entry) => Math.floor(Date.parse(entry.written_at) / HOUR_MS) * HOUR_MS, () => 1);

/**
 * Relevance first, then recency and confidence as gentle multipliers: an entry written today
 * with confidence 1 keeps its relevance; a year-old guess (confidence 0) keeps 0.86 of it,
 * enough to break near-ties without burying a clearly better match.
 */
export const recencyWeight = (entry: Entry, now: number): number => {
  const ageDays = Math.max(0, now - writtenHour(entry)) / DAY_MS;
  return 0.95 + 0.05 * 2 ** (-ageDays / RECENCY_HALF_LIFE_DAYS);
};

export const confidenceWeight = (entry: Entry): number => 0.9 + 0.1 * entry.confidence;

/**
 * An entry's address, the key candidates of different rankings meet on (backends that answer
 * each ranking with objects of their own). Kept per entry: the same entries come back search
 * after search, and a string built anew is hashed anew by every Map it is looked up in.
 */
export const addressOf = entryMemo((e: Entry): string => `${e.entity_path}\u0000${e.key}`, (address) => address.length);
/** The comparison localeCompare makes (the default locale's), built once rather than looked up per call. */
const collator = new Intl.Collator();

/**
 * Weights of the rankings when fused by scores, tuned on the operations set of test/eval with
 * the built-in embedder: its word-by-word ranking is the surest sign of a paraphrase, its
 * averaged vector the weakest; text at 0.7 rather than 1 lets a paraphrase's word-by-word
 * match outrank an entry that merely shares a common word (recall@5 +0.010 there, +0.036 on
 * the conversational set).
 * Without a word-by-word ranking (a sentence model, whose vector is its strongest signal)
 * text and vector weigh alike.
 */
const SCORE_WEIGHTS = { text: 0.7, vector: 0.5, words: 2 };
const SCORE_WEIGHTS_WITHOUT_WORDS = { text: 1, vector: 1 };

type Fused = { entry: Entry; address: string; parts: ScoreParts };

/**
 * How deep into each ranking the rescaling looks: the worst of its first SCALE_DEPTH candidates
 * scores 0, anything below it too. A search asking for more results reads deeper rankings, and
 * with the worst candidate of the whole list as the floor every score would move with `limit`:
 * the first ten results of `limit: 30` were not those of `limit: 10` (and ranked worse).
 */
export const SCALE_DEPTH = 50;

/**
 * Adds a ranking's scores rescaled to 0–1 between its SCALE_DEPTH-th and best candidate. A
 * ranking whose candidates all score alike (a speaker's name on half the turns of a
 * conversation) then adds nothing, where reciprocal ranks would still give its arbitrary order
 * full weight. `fused[i]` is the fused result of `list[i]`. The word-by-word ranking, whose
 * length does not follow `limit`, is rescaled over all of it.
 */
const addScaled = (list: Candidate[] | null, fused: Fused[], weight: number, depth = SCALE_DEPTH): void => {
  if (!list || list.length === 0) return;
  let max = -Infinity;
  let min = Infinity;
  for (let i = 0; i < Math.min(list.length, depth); i++) {
    const score = (list[i] as Candidate).score;
    max = Math.max(max, score);
    min = Math.min(min, score);
  }
  const scaled = (score: number): number => (max > min ? Math.max(0, score - min) / (max - min) : score >= max ? 1 : 0);
  list.forEach((c, i) => {
    (fused[i] as Fused).parts.relevance += weight * scaled(c.score);
  });
};

/**
 * The share of the query's BM25 ceiling (bm25.ts queryCeiling) the best text candidate holds.
 * Rescaled, the best candidate of any text ranking scores 1, whether it matched every rare word
 * of the query or only one common one (a service's name, which a paraphrase shares with every
 * entry about that service); weighed by this share, a ranking that found little says little.
 */
const coverage = (text: Candidate[] | null, ceiling: number | undefined): number => {
  const best = text?.[0]?.score ?? 0;
  return ceiling && ceiling > 0 ? Math.min(1, best / ceiling) : 1;
};

/**
 * Fuse the text and vector rankings (either may be absent), and in hybrid the word-by-word
 * ranking of their best candidates, into one, best first. With several: by default (`by:
 * 'scores'`) each ranking's scores rescaled between its worst and best candidate, weighted
 * (text also by its `coverage` of `textCeiling`) and summed; `by: 'ranks'` is reciprocal rank
 * fusion, as before (search profile v1). With one ranking, its scores relative to its best.
 */
export const fuse = (
  text: Candidate[] | null,
  vector: Candidate[] | null,
  options: { now: number; limit: number; vectorWeight: number; words?: Candidate[] | null; textCeiling?: number; by?: 'ranks' | 'scores' },
): Ranked[] => {
  // Each candidate's address is built and looked up once; the rescaling pass reuses the results.
  const byAddress = new Map<string, Fused>();
  const fusedOf = (list: Candidate[] | null | undefined): Fused[] =>
    (list ?? []).map((c) => {
      const address = addressOf(c.entry);
      let found = byAddress.get(address);
      if (!found) {
        found = { entry: c.entry, address, parts: { text: null, vector: null, relevance: 0, recency: 1, confidence: 1 } };
        byAddress.set(address, found);
      }
      return found;
    });
  const textFused = fusedOf(text);
  const vectorFused = fusedOf(vector);
  const wordsFused = fusedOf(options.words);
  const both = text !== null && vector !== null;
  const textBest = text?.[0]?.score || 1;
  text?.forEach((c, i) => {
    const p = (textFused[i] as Fused).parts;
    p.text = { rank: i + 1, score: c.score };
    p.relevance += both ? 1 / (RRF_K + i + 1) : c.score / textBest;
  });
  const vectorBest = vector?.[0]?.score || 1;
  vector?.forEach((c, i) => {
    const p = (vectorFused[i] as Fused).parts;
    p.vector = { rank: i + 1, similarity: c.score };
    p.relevance += both ? options.vectorWeight / (RRF_K + i + 1) : Math.max(0, c.score) / vectorBest;
  });
  options.words?.forEach((c, i) => {
    const p = (wordsFused[i] as Fused).parts;
    p.words = { rank: i + 1, similarity: c.score };
    p.relevance += 1 / (RRF_K + i + 1);
  });
  if (options.by === 'scores' && both) {
    for (const v of byAddress.values()) v.parts.relevance = 0;
    const weights = options.words ? SCORE_WEIGHTS : SCORE_WEIGHTS_WITHOUT_WORDS;
    addScaled(text, textFused, weights.text * coverage(text, options.textCeiling));
    addScaled(vector, vectorFused, weights.vector);
    if (options.words) addScaled(options.words, wordsFused, SCORE_WEIGHTS.words, options.words.length);
  }
  const ranked: (Ranked & { address: string })[] = [];
  for (const { entry, address, parts } of byAddress.values()) {
    parts.recency = recencyWeight(entry, options.now);
    parts.confidence = confidenceWeight(entry);
    ranked.push({ entry, address, parts, score: parts.relevance * parts.recency * parts.confidence });
  }
  ranked.sort((a, b) => b.score - a.score || collator.compare(a.address, b.address));
  return ranked.slice(0, options.limit).map(({ entry, score, parts }) => ({ entry, score, parts }));
};
