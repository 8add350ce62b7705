import type { Embedder } from '../ports/embedder.ts';
import { STOP_WORDS, words } from '../search/analyzer.ts';
import { type WordTable, loadTable } from './word-table.ts';

const TABLE = new URL('./data/glove-100d.bin', import.meta.url);
/** SIF smoothing (Arora et al. 2017): a word's weight is a / (a + p(word)). */
const SIF_A = 3e-4;
/** Words the table lacks (names, jargon) still count, as a fixed pseudo-random direction each. */
const UNKNOWN_WEIGHT = 0.7;
const NUMBER_WEIGHT = 0.3;

/**
 * The default embedder: no network, no model download, deterministic. A text's vector is the
 * SIF-weighted average of GloVe word vectors (100 dimensions, the 100k most frequent words,
 * distilled by scripts/distill-embeddings.ts), so "outage" lands near "downtime" and
 * "rollback" near "revert". Words outside the table get a stable hashed direction, which
 * makes a shared rare name (a service, a ticket number) count too. It captures words, not
 * word order or negation: a sentence model served by an OpenAI-compatible endpoint ranks
 * paraphrases better (see README: Search).
 */
export class BuiltinEmbedder implements Embedder {
  readonly id = 'builtin:glove-100d-sif-v1';
  readonly dimension = 100;
  readonly local = true;
  private table: WordTable | undefined;
  private unknownNorm = 1;
  private zipfNorm = 1;
  private readonly unknown = new Map<string, Float32Array>();

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    return texts.map((t) => this.embedOne(t));
  }

  /** Synchronous form for in-process indexing. */
  embedOne(text: string): Float32Array {
    const table = this.load();
    const dim = table.dimension;
    const out = new Float32Array(dim);
    for (const { word } of words(text)) {
      if (STOP_WORDS.has(word) || word.length > 40) continue;
      const row = this.rowOf(word);
      if (row !== undefined) {
        const weight = SIF_A / (SIF_A + 1 / ((row + 10) * this.zipfNorm));
        const scale = (table.scales[row] as number) * weight;
        const base = row * dim;
        for (let d = 0; d < dim; d++) out[d]! += (table.components[base + d] as number) * scale;
      } else {
        const weight = (/^[0-9]+$/.test(word) ? NUMBER_WEIGHT : UNKNOWN_WEIGHT) * this.unknownNorm;
        const v = this.unknownVector(word);
        for (let d = 0; d < dim; d++) out[d]! += (v[d] as number) * weight;
      }
    }
    let norm = 0;
    for (let d = 0; d < dim; d++) norm += (out[d] as number) ** 2;
    if (norm > 0) for (let d = 0; d < dim; d++) out[d]! /= Math.sqrt(norm);
    return out;
  }

  private load(): WordTable {
    if (this.table) return this.table;
    const table = loadTable(TABLE);
    if (table.dimension !== this.dimension) throw new Error(`word table has ${table.dimension} dimensions, expected ${this.dimension}`);
    // Typical norm of a weighted known word, so an unknown word weighs like a rare known one.
    let sum = 0;
    const sample = Math.min(2000, table.scales.length);
    for (let row = table.scales.length - sample; row < table.scales.length; row++) {
      let n = 0;
      for (let d = 0; d < table.dimension; d++) n += ((table.components[row * table.dimension + d] as number) * (table.scales[row] as number)) ** 2;
      sum += Math.sqrt(n);
    }
    this.unknownNorm = sum / sample;
    this.zipfNorm = Math.log(table.scales.length) + 0.5772;
    this.table = table;
    return table;
  }

  /** The word's row, or that of a plain inflection of it ("deploys", "deployed", "retries"). */
  private rowOf(word: string): number | undefined {
    const rows = (this.table as WordTable).rows;
    const direct = rows.get(word);
    if (direct !== undefined || word.length < 4) return direct;
    for (const [suffix, replacement] of INFLECTIONS) {
      if (word.endsWith(suffix)) {
        const row = rows.get(word.slice(0, -suffix.length) + replacement);
        if (row !== undefined) return row;
      }
    }
    return undefined;
  }

  private unknownVector(word: string): Float32Array {
    let v = this.unknown.get(word);
    if (v) return v;
    v = new Float32Array(this.dimension);
    // FNV-1a seeds a xorshift generator: the same word gives the same direction on every machine.
    let seed = 0x811c9dc5;
    for (let i = 0; i < word.length; i++) seed = Math.imul(seed ^ word.charCodeAt(i), 0x01000193);
    let norm = 0;
    for (let d = 0; d < this.dimension; d++) {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      v[d] = (seed >>> 0) / 0x80000000 - 1;
      norm += (v[d] as number) ** 2;
    }
    for (let d = 0; d < this.dimension; d++) v[d]! /= Math.sqrt(norm);
    if (this.unknown.size > 50_000) this.unknown.clear();
    this.unknown.set(word, v);
    return v;
  }
}

const INFLECTIONS: [string, string][] = [['ies', 'y'], ['es', ''], ['s', ''], ['ed', ''], ['ed', 'e'], ['ing', ''], ['ing', 'e']];
