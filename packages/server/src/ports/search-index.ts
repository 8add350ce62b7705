import type { Entry } from '../domain/entry.ts';

/**
 * A phrase: its words in order, each `offset` positions after the first (stop words leave
 * gaps). `alternatives`:
 * terms that stand beside the typed word at its position (a number word's digits, a padded
 * number's value, a date's month): the phrase matches any of them there.
 */
export type Phrase = { term: string; offset: number; alternatives?: readonly string[] }[];

/**
 * A search query as every backend runs it (search-rules/query.ts parses it). Plain words are
 * OR-ed and ranked (BM25), so an entry matching more and rarer words ranks higher;
 * `"quoted words"` must appear in that order; `word*` matches every term starting with `word`.
 */
export interface ParsedQuery {
  /** Distinct terms of plain words and phrases. */
  terms: string[];
  phrases: Phrase[];
  /** Term prefixes to expand against the index vocabulary (lower-case, unstemmed and stemmed). */
  prefixes: string[][];
  /** The query as typed, for the embedder. */
  text: string;
  /**
   * Related terms not in the query (from the embedder's lexicon: "physician" for "doctor"),
   * each ranked by BM25 with its idf scaled by `weight` (below 1): an entry using the other
   * word is found, one using the query's own words still ranks first.
   */
  expansions?: { term: string; weight: number }[];
}

/** Which live entries a search may return (SPEC §5 search filters). */
export interface SearchFilter {
  namespace: string;
  /** Only entries under one of these entity paths (segment-wise prefixes); absent = any path. */
  prefixes?: readonly string[];
  agentId?: string;
  /** Only entries whose current version was written at or after this time (ms since the epoch). */
  since?: number;
  minConfidence?: number;
  eventType?: string;
  /** Clock for expiry (ms since the epoch). */
  now: number;
}

/** An entry a ranking proposes, with that ranking's own score (BM25F, or cosine similarity). */
export interface Candidate {
  entry: Entry;
  score: number;
}

/**
 * A text ranking: its candidates, best first, and its `ceiling`, the most BM25 could give a
 * document for the query's own terms in this collection (bm25.ts `queryCeiling`). Fusion
 * weighs the ranking by the share of it that the best candidate holds.
 */
export interface TextRanking {
  candidates: Candidate[];
  ceiling: number;
}

export interface SearchIndexStatus {
  /** `building` while the index loads at start; searches wait or answer UNAVAILABLE. */
  state: 'building' | 'ready';
  /** Live entries the text index holds. */
  entries: number;
  /** Embedder whose vectors the index holds, and how many entries have one. */
  embedder: string | null;
  dimension: number | null;
  embedded: number;
  /** Entries waiting for a vector (new writes, or re-embedding after an embedder change). */
  pendingEmbeddings: number;
  /** Optional: texts the embedder refused alone since start, set aside (found by text search only). */
  unembeddable?: number;
  /** Optional: another embedder that another server of the same database recorded since this one started (they re-embed each other's entries). */
  embedderConflict?: string | null;
  /** Whether vector search can answer at all (PostgreSQL without pgvector cannot). */
  vectors: boolean;
  /**
   * Whether an in-process index is being saved to disk now (in slices between requests, so
   * searches meanwhile are slower); never where PostgreSQL searches in SQL, whose index lives in the database.
   */
  saving: boolean;
}

/**
 * The search capability services call: two candidate rankings over the current, live heads
 * of one namespace, which the service fuses (search-rules/fuse.ts). Every backend implements it:
 * an in-process index kept current by the change feed (filesystem, S3) or SQL over tsvector
 * and pgvector (PostgreSQL). Deleted and expired entries never come back.
 */
export interface SearchIndex {
  /** Up to `n` entries matching the query's terms, best BM25F first, and the query's ceiling here. */
  textCandidates(query: ParsedQuery, filter: SearchFilter, n: number): Promise<TextRanking>;
  /** Up to `n` entries nearest to `vector` (from the same embedder), most similar first. */
  vectorCandidates(vector: Float32Array, filter: SearchFilter, n: number): Promise<Candidate[]>;
  status(): SearchIndexStatus;
  /**
   * Optional: for each of `terms`, how many live entries that `filter` lets through hold it,
   * counted up to `cap` (exact, never from statistics: what a caller may not see counts for
   * nothing). For spelling (search-rules/spelling.ts).
   */
  termsHeld?(terms: readonly string[], filter: SearchFilter, cap: number): Promise<Map<string, number>>;
  /**
   * Optional: whether any live entry of `namespace` holds `term`, by the statistics the text
   * ranking keeps, at once (no read): true means held, false "ask termsHeld" (PostgreSQL's
   * statistics leave out terms of one row and lag behind writes). For spelling's common case, a
   * name the namespace uses; another namespace's words count for nothing.
   */
  holdsTerm?(term: string, namespace: string): boolean;
  /**
   * Resolves once whatever the index keeps on disk holds nothing `Store.forget` removed so
   * far (the index drops forgotten entries itself, from `changes.subscribeForgets`).
   */
  persisted(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Where an in-process index keeps its saved file: a file of the data directory, an object of
 * the bucket, rows of PostgreSQL. The backend that owns the storage provides it.
 */
export interface SnapshotFile {
  read(): Promise<Buffer | null>;
  /** Replace the file atomically with what `fill` streams to `sink`; a throw leaves the old file. */
  write(fill: (sink: (chunk: Buffer) => Promise<void>) => Promise<void>): Promise<void>;
  /**
   * Where replicas share the file (S3, PostgreSQL): claim the next save for this replica,
   * unless another replica claimed one within the last `withinMs` (true: save). Every replica
   * hears the same writes, so one replica's save serves them all. Absent where one server
   * owns the file: it always saves.
   */
  claimSave?(withinMs: number): Promise<boolean>;
}
