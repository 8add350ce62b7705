import { type WordGraph, loadGraph } from './word-graph.ts';
import type { HomedVector } from './word-similarities.ts';
import { type WordRows, type WordTable, loadTable, readRows } from './word-table.ts';

/** SIF smoothing (Arora et al. 2017): a word's weight is a / (a + p(word)). */
const SIF_A = 3e-4;
/** Words the table lacks (names, jargon) still count, as a fixed pseudo-random direction each. */
const UNKNOWN_WEIGHT = 0.7;
const NUMBER_WEIGHT = 0.3;
/**
 * A word as a unit vector with its weight. `pass`, `slot` and `spells` are scratch for the
 * word-by-word ranking (BuiltinEmbedder.wordMatch): the call that last met the word, the row
 * of that call's similarity table holding it, and the positions of the query's words that
 * spell the word out as a name in parts or share its stem (none, mostly); `home` is where that
 * table keeps the vector (HomedVector).
 */
export interface WordUnit extends HomedVector {
  readonly word: string;
  readonly weight: number;
  /** Whether the table holds the word (or a plain inflection of it); if not, its direction is a hash of the word. */
  readonly known: boolean;
  pass: number;
  slot: number;
  spells?: readonly number[] | undefined;
  /** The word's stem (analyzer.ts termOf), once the ranking has needed it. */
  stem?: string | undefined;
}

const INFLECTIONS: [string, string][] = [['ies', 'y'], ['es', ''], ['s', ''], ['ed', ''], ['ed', 'e'], ['ing', ''], ['ing', 'e']];

/** A word table as read, with the lexicon laid over it and the norms the weights need. */
interface ReadWords {
  table: WordTable;
  lexicon: { graph: WordGraph; words: string[] } | null;
  unknownNorm: number;
  zipfNorm: number;
}

/**
 * Tables read in this process, by their files. Nothing changes them once read, so embedders
 * in one process share them: each server started in a process (a test file starts dozens, a
 * host may embed several) would otherwise spend a fifth of a second and some 40 MiB on its own
 * copy. Workers are other isolates and read their own.
 */
const readWords = new Map<string, ReadWords>();

const readWordFiles = (file: URL, lexiconFiles: { graph: URL; vectors: URL } | null): ReadWords => {
  const table = loadTable(file);
  let lexicon: ReadWords['lexicon'] = null;
  if (lexiconFiles) {
    const graph = loadGraph(lexiconFiles.graph, table.scales.length);
    overlay(table, readRows(lexiconFiles.vectors));
    lexicon = { graph, words: table.words };
  }
  // Typical norm of a rare known word, so an unknown word weighs like one.
  let sum = 0;
  const sample = Math.min(2000, table.scales.length);
  for (let row = table.scales.length - sample; row < table.scales.length; row++) {
    let n = 0;
    for (let d = 0; d < table.dimension; d++) n += ((table.components[row * table.dimension + d] as number) * (table.scales[row] as number)) ** 2;
    sum += Math.sqrt(n);
  }
  return { table, lexicon, unknownNorm: sum / sample, zipfNorm: Math.log(table.scales.length) + 0.5772 };
};

/**
 * The built-in embedder's words: GloVe vectors from the distilled table (loaded on first use,
 * about 0.15 s), each with its weight in a sentence — SIF for known words, from their
 * frequency rank; a fixed weight and a stable hashed direction for words the table lacks.
 */
export class WordVectors {
  readonly dimension: number;
  private readonly file: URL;
  private readonly lexiconFiles: { graph: URL; vectors: URL } | null;
  private table: WordTable | undefined;
  private lexicon: { graph: WordGraph; words: string[] } | null = null;
  private unknownNorm = 1;
  private zipfNorm = 1;
  private readonly unknown = new Map<string, Float32Array>();
  private readonly units = new Map<string, WordUnit>();

  /**
   * `lexicon`: the lexical graph over the table's words (word-graph.ts) and a table of
   * retrofitted vectors that replace those words' rows (scripts/distill-wordnet.ts).
   */
  constructor(file: URL, dimension: number, lexicon: { graph: URL; vectors: URL } | null = null) {
    this.file = file;
    this.lexiconFiles = lexicon;
    this.dimension = dimension;
  }

  /** Read the table (and the lexicon) now rather than on first use. */
  warm(): void {
    this.load();
  }

  /** Add `word`'s weighted vector to `out`. */
  addTo(out: Float32Array, word: string): void {
    const table = this.load();
    const dim = this.dimension;
    const row = this.rowOf(word);
    if (row !== undefined) {
      const scale = (table.scales[row] as number) * this.weightOf(row);
      for (let d = 0; d < dim; d++) out[d]! += (table.components[row * dim + d] as number) * scale;
      return;
    }
    const weight = this.unknownWeight(word) * this.unknownNorm;
    const v = this.unknownVector(word);
    for (let d = 0; d < dim; d++) out[d]! += (v[d] as number) * weight;
  }

  /**
   * The words the lexical graph relates to `word`, each with its cosine to it (none without a
   * graph, or for a word the table lacks). Cosines come from the table's rows as they are:
   * the int8 components' scales cancel out, and a query's first visit does not build a unit
   * vector, kept for good, for each of a word's dozens of neighbours.
   */
  related(word: string): { word: string; cos: number }[] {
    const table = this.load();
    const row = this.rowOf(word);
    if (!this.lexicon || row === undefined) return [];
    const { graph, words } = this.lexicon;
    const out: { word: string; cos: number }[] = [];
    for (let k = graph.offsets[row] as number; k < (graph.offsets[row + 1] as number); k++) {
      const other = graph.neighbours[k] as number;
      out.push({ word: words[other] as string, cos: rowCosine(table, row, other) });
    }
    return out;
  }

  /** Whether the table holds `word` (lower case, as the text's words are read). */
  knows(word: string): boolean {
    this.load();
    return this.rowOf(word) !== undefined;
  }

  /** `word` as a unit vector, with its weight (cached: the same words come back all the time). */
  unit(word: string): WordUnit {
    let known = this.units.get(word);
    if (!known) {
      if (this.units.size >= 50_000) this.units.clear();
      known = this.computeUnit(word);
      this.units.set(word, known);
    }
    return known;
  }

  private computeUnit(word: string): WordUnit {
    const table = this.load();
    const row = this.rowOf(word);
    if (row === undefined) return { word, vector: this.unknownVector(word), weight: this.unknownWeight(word), known: false, pass: 0, slot: 0, spells: undefined, stem: undefined, home: 0, homeGeneration: 0 };
    const dim = this.dimension;
    const vector = new Float32Array(dim);
    let norm = 0;
    for (let d = 0; d < dim; d++) norm += (vector[d] = table.components[row * dim + d] as number) ** 2;
    for (let d = 0; d < dim; d++) vector[d]! /= Math.sqrt(norm) || 1;
    return { word, vector, weight: this.weightOf(row), known: true, pass: 0, slot: 0, spells: undefined, stem: undefined, home: 0, homeGeneration: 0 };
  }

  private weightOf(row: number): number {
    return SIF_A / (SIF_A + 1 / ((row + 10) * this.zipfNorm));
  }

  private unknownWeight(word: string): number {
    return /^[0-9]+$/.test(word) ? NUMBER_WEIGHT : UNKNOWN_WEIGHT;
  }

  private load(): WordTable {
    if (this.table) return this.table;
    const key = `${this.file.href} ${this.lexiconFiles?.graph.href ?? ''} ${this.lexiconFiles?.vectors.href ?? ''}`;
    let words = readWords.get(key);
    if (!words) {
      words = readWordFiles(this.file, this.lexiconFiles);
      readWords.set(key, words);
    }
    if (words.table.dimension !== this.dimension) throw new Error(`word table has ${words.table.dimension} dimensions, expected ${this.dimension}`);
    this.lexicon = words.lexicon;
    this.unknownNorm = words.unknownNorm;
    this.zipfNorm = words.zipfNorm;
    this.table = words.table;
    return words.table;
  }

  /** The word's row, or that of a plain inflection of it ("deploys", "deployed", "retries"). */
  private rowOf(word: string): number | undefined {
    const rows = (this.table as WordTable).rows;
    const direct = rows.get(word);
    if (direct !== undefined || word.length < 4) return direct;
    for (const [suffix, replacement] of INFLECTIONS) {
      if (!word.endsWith(suffix)) continue;
      const row = rows.get(word.slice(0, -suffix.length) + replacement);
      if (row !== undefined) return row;
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

/** Cosine of two rows of `table`, from their int8 components (a row's scale cancels out). */
const rowCosine = (table: WordTable, a: number, b: number): number => {
  const dim = table.dimension;
  const c = table.components;
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let d = 0; d < dim; d++) {
    const x = c[a * dim + d] as number;
    const y = c[b * dim + d] as number;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
};

/** Replaces the rows of `table` that `over` has (same words, same dimension), in place. */
const overlay = (table: WordTable, over: WordRows): void => {
  if (over.dimension !== table.dimension) throw new Error(`retrofitted vectors have ${over.dimension} dimensions, the table ${table.dimension}`);
  const dim = table.dimension;
  for (let i = 0; i < over.words.length; i++) {
    const row = table.rows.get(over.words[i] as string);
    if (row === undefined) continue;
    table.scales[row] = over.scales[i] as number;
    table.components.set(over.components.subarray(i * dim, (i + 1) * dim), row * dim);
  }
};
