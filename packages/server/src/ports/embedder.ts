/**
 * Turns texts into vectors whose cosine similarity tracks similarity of meaning. Adapters:
 * the built-in offline embedder (embed/builtin-embedder.ts), any OpenAI-compatible endpoint
 * (embed/openai-embedder.ts: OpenAI, Ollama, vLLM, TEI) and a local sentence model run with
 * ONNX Runtime (embed/onnx-embedder.ts).
 *
 * - `id` names the model and its settings; vectors from different ids are never compared,
 *   so changing it means re-embedding (the search index does that in the background).
 * - `dimension` is known up front for the built-in embedder; a remote model's is learned
 *   from its first answer (undefined until then).
 * - `embed` answers one vector per text, in order, each of `dimension` numbers; it rejects
 *   when the model cannot be reached (callers retry, and writes never wait for it).
 */
export interface Embedder {
  readonly id: string;
  readonly dimension: number | undefined;
  /** True when embedding runs in this process and costs microseconds, so callers may wait for it. */
  readonly local: boolean;
  embed(texts: readonly string[]): Promise<Float32Array[]>;
  /**
   * Optional, for local word-vector models: how well each text matches the query word by
   * word (0–1), which ranks short paraphrases better than one averaged vector. Hybrid search
   * uses it as a third ranking of the candidates the other two found.
   */
  wordMatch?(query: string, texts: readonly string[]): Promise<number[]>;
  /**
   * Optional: load now what the first embedding would load (a word table), so that no
   * request waits for it. Called once the server listens.
   */
  warm?(): void;
  /**
   * Optional: `embed` for batches off the request path (the index's queue, an indexer, a
   * search as of a past instant), where the embedder can run them in another thread; callers
   * fall back to `embed` without it.
   */
  embedInBackground?(texts: readonly string[]): Promise<Float32Array[]>;
  /** Optional: release what the embedder holds (a model's thread and memory). */
  close?(): Promise<void>;
  /**
   * Optional, for embedders with a lexicon: words related to the query's words ("physician"
   * for "doctor"), each with a weight in (0, 1], for text search to match as well.
   */
  relatedWords?(query: string): { word: string; weight: number }[];
  /**
   * Optional, for embedders with a lexicon: whether its word table holds `word` (lower case),
   * so a word it lacks that no entry holds may be a misspelling (search-rules/spelling.ts).
   */
  knowsWord?(word: string): boolean;
}
