import type { Entry } from './entry.ts';

/**
 * What a search answers (SPEC §5): each result with why it ranked (`parts`) and why it
 * matched (`highlights`). The server's search service returns exactly these types.
 */

/** hybrid: text and vector rankings fused; text: full-text only; vector: embeddings only. */
export type SearchMode = 'hybrid' | 'text' | 'vector';

/** Where a result's score came from, so callers can see why it ranked where it did. */
export interface ScoreParts {
  /** Rank (1 = best) and BM25F score in the text ranking, when it was there. */
  text: { rank: number; score: number } | null;
  /** Rank and cosine similarity in the vector ranking, when it was there. */
  vector: { rank: number; similarity: number } | null;
  /** Rank and similarity in the word-by-word ranking of the built-in embedder (hybrid only). */
  words?: { rank: number; similarity: number };
  /** Relevance before the weights below: in hybrid, each ranking's score rescaled between its worst and best candidate, weighted and summed (reciprocal rank fusion with the server's search profile v1); with one ranking, the score relative to the best. */
  relevance: number;
  /** Multipliers for how recent and how trusted the entry is. */
  recency: number;
  confidence: number;
}

/** A piece of one field around the words that matched, with their offsets inside `fragment`. */
export interface Highlight {
  field: string;
  fragment: string;
  /** [start, end) UTF-16 offsets of each matching word in `fragment`. */
  matches: [number, number][];
}

export interface SearchResult {
  entry: Entry;
  score: number;
  parts: ScoreParts;
  highlights: Highlight[];
}

export interface SearchResponse {
  results: SearchResult[];
  /** The rankings actually used: hybrid falls back to text when no vector can be had. */
  mode: SearchMode;
  /**
   * With `discredited: "apart"`: matching entries whose recorded outcomes discredit them
   * (approaches tried that failed), ranked the same way, kept out of `results`.
   */
  tried_and_failed?: SearchResult[];
  /**
   * Words of the query taken for misspellings (unknown to the lexicon, held by no entry) and
   * searched as the word of the lexicon one letter away that the most entries hold; absent
   * when none was.
   */
  corrections?: { typed: string; searched: string }[];
}

/** What search and briefing do with discredited entries: leave them out (default), mix them in, or list them apart. */
export type DiscreditedMode = 'hide' | 'include' | 'apart';
