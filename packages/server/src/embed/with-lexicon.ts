import type { Embedder } from '../ports/embedder.ts';

/** What the built-in embedder lends a sentence model: its word-level parts. */
export type Lexicon = Required<Pick<Embedder, 'wordMatch' | 'relatedWords' | 'knowsWord' | 'warm'>> & Pick<Embedder, 'close'>;

/**
 * A sentence model (an endpoint, a local ONNX model) for the vectors, with the built-in
 * lexicon beside it for what works on words rather than vectors: query expansion in the text
 * ranking (`relatedWords`) and hybrid search's word-by-word ranking (`wordMatch`). Neither
 * depends on where the vectors come from, and without them a configured model gave up the
 * default's two largest gains on the evaluation (README: Search quality, "a sentence model").
 * Everything about vectors (id, dimension, embedding, locality) is the model's.
 */
export class WithLexicon implements Embedder {
  private readonly model: Embedder;
  private readonly lexicon: Lexicon;

  constructor(model: Embedder, lexicon: Lexicon) {
    this.model = model;
    this.lexicon = lexicon;
  }

  get id(): string {
    return this.model.id;
  }

  /** A remote model's is learned from its first answer, so it is read through each time. */
  get dimension(): number | undefined {
    return this.model.dimension;
  }

  get local(): boolean {
    return this.model.local;
  }

  embed(texts: readonly string[]): Promise<Float32Array[]> {
    return this.model.embed(texts);
  }

  embedInBackground(texts: readonly string[]): Promise<Float32Array[]> {
    return this.model.embedInBackground ? this.model.embedInBackground(texts) : this.model.embed(texts);
  }

  wordMatch(query: string, texts: readonly string[]): Promise<number[]> {
    return this.lexicon.wordMatch(query, texts);
  }

  relatedWords(query: string): { word: string; weight: number }[] {
    return this.lexicon.relatedWords(query);
  }

  knowsWord(word: string): boolean {
    return this.lexicon.knowsWord(word);
  }

  warm(): void {
    this.model.warm?.();
    this.lexicon.warm();
  }

  async close(): Promise<void> {
    await Promise.all([this.model.close?.(), this.lexicon.close?.()]);
  }
}
