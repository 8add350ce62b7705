import { readFileSync } from 'node:fs';

/**
 * The built-in embedder's word vectors in one flat file: int8 components with one float scale
 * per word (a quarter of float32's size; cosine similarity is unaffected at this precision).
 * Layout: "CWT1", u32 words, u32 dimension, u32 vocabulary bytes, the vocabulary as UTF-8
 * lines in frequency order, padding to 4 bytes, f32 scales, int8 components.
 */
export interface WordRows {
  dimension: number;
  /** The words by row; the row is also the word's frequency rank (0 = most frequent). */
  words: string[];
  scales: Float32Array;
  components: Int8Array;
}

/** A table with its words indexed: what lookups by word need. */
export interface WordTable extends WordRows {
  /** Word → row. */
  rows: Map<string, number>;
}

const MAGIC = 0x31545743; // "CWT1" little-endian

export const encodeTable = (words: readonly string[], dimension: number, vectors: Float64Array): Buffer => {
  const vocab = Buffer.from(words.join('\n'), 'utf8');
  const vocabEnd = 16 + vocab.length;
  const scalesAt = Math.ceil(vocabEnd / 4) * 4;
  const componentsAt = scalesAt + words.length * 4;
  const out = Buffer.alloc(componentsAt + words.length * dimension);
  out.writeUInt32LE(MAGIC, 0);
  out.writeUInt32LE(words.length, 4);
  out.writeUInt32LE(dimension, 8);
  out.writeUInt32LE(vocab.length, 12);
  vocab.copy(out, 16);
  for (let i = 0; i < words.length; i++) {
    let max = 0;
    for (let d = 0; d < dimension; d++) max = Math.max(max, Math.abs(vectors[i * dimension + d]!));
    const scale = max / 127 || 1;
    out.writeFloatLE(scale, scalesAt + i * 4);
    for (let d = 0; d < dimension; d++) out.writeInt8(Math.round(vectors[i * dimension + d]! / scale), componentsAt + i * dimension + d);
  }
  return out;
};

const decodeTable = (buffer: Buffer): WordRows => {
  if (buffer.readUInt32LE(0) !== MAGIC) throw new Error('not a Cairn word table (bad magic)');
  const count = buffer.readUInt32LE(4);
  const dimension = buffer.readUInt32LE(8);
  const vocabBytes = buffer.readUInt32LE(12);
  const words = buffer.toString('utf8', 16, 16 + vocabBytes).split('\n');
  if (words.length !== count) throw new Error(`word table lists ${words.length} words, header says ${count}`);
  const scalesAt = Math.ceil((16 + vocabBytes) / 4) * 4;
  const componentsAt = scalesAt + count * 4;
  // Copies, so the views are aligned whatever offset the file buffer has in its pool.
  const scales = new Float32Array(buffer.buffer.slice(buffer.byteOffset + scalesAt, buffer.byteOffset + componentsAt));
  const components = new Int8Array(buffer.buffer.slice(buffer.byteOffset + componentsAt, buffer.byteOffset + componentsAt + count * dimension));
  return { dimension, words, scales, components };
};

/**
 * The table's rows as stored, its words unindexed: a table read only to be copied row by row
 * (the retrofitted vectors laid over the main table) needs no map of its 33k words, which took
 * a quarter of a start's table read with the garbage it left.
 */
export const readRows = (file: URL | string): WordRows => decodeTable(readFileSync(file));

export const loadTable = (file: URL | string): WordTable => {
  const table = readRows(file);
  const rows = new Map<string, number>();
  for (let i = 0; i < table.words.length; i++) rows.set(table.words[i] as string, i);
  return { ...table, rows };
};
