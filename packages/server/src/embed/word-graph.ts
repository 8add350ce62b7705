import { readFileSync } from 'node:fs';

/**
 * The lexical graph shipped beside the word table (scripts/distill-wordnet.ts): which rows of
 * the table WordNet relates. Layout: "CWG1", u32 words, u32 pairs, then each pair (a < b,
 * sorted) as two LEB128 varints — a minus the previous a, and b minus the previous b when a
 * repeats, else b minus a. About 3 bytes a pair.
 */
export interface WordGraph {
  /** Neighbours of row r: neighbours[offsets[r] … offsets[r + 1]). */
  offsets: Uint32Array;
  neighbours: Uint32Array;
}

const MAGIC = 0x31475743; // "CWG1" little-endian

const varint = (value: number, out: number[]): void => {
  let v = value;
  while (v >= 0x80) {
    out.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
};

export const encodeGraph = (words: number, pairs: readonly [number, number][]): Buffer => {
  const body: number[] = [];
  let lastA = 0;
  let lastB = 0;
  pairs.forEach(([a, b], i) => {
    varint(a - lastA, body);
    varint(a === lastA && i > 0 ? b - lastB : b - a, body);
    lastA = a;
    lastB = b;
  });
  const out = Buffer.alloc(12 + body.length);
  out.writeUInt32LE(MAGIC, 0);
  out.writeUInt32LE(words, 4);
  out.writeUInt32LE(pairs.length, 8);
  Buffer.from(body).copy(out, 12);
  return out;
};

export const decodeGraph = (buffer: Buffer, words: number): WordGraph => {
  if (buffer.readUInt32LE(0) !== MAGIC) throw new Error('not a Cairn word graph (bad magic)');
  if (buffer.readUInt32LE(4) !== words) throw new Error(`word graph is for ${buffer.readUInt32LE(4)} words, the table has ${words}`);
  const count = buffer.readUInt32LE(8);
  const from = new Uint32Array(count);
  const to = new Uint32Array(count);
  let at = 12;
  const read = (): number => {
    let value = 0;
    let shift = 1;
    for (;;) {
      const byte = buffer[at++] as number;
      value += (byte & 0x7f) * shift;
      if (byte < 0x80) return value;
      shift *= 128;
    }
  };
  let lastA = 0;
  let lastB = 0;
  for (let i = 0; i < count; i++) {
    const a = lastA + read();
    const delta = read();
    const b = a === lastA && i > 0 ? lastB + delta : a + delta;
    from[i] = a;
    to[i] = b;
    lastA = a;
    lastB = b;
  }
  const offsets = new Uint32Array(words + 1);
  for (let i = 0; i < count; i++) {
    offsets[(from[i] as number) + 1]! += 1;
    offsets[(to[i] as number) + 1]! += 1;
  }
  for (let r = 0; r < words; r++) offsets[r + 1]! += offsets[r] as number;
  const fill = offsets.slice(0, words);
  const neighbours = new Uint32Array(count * 2);
  for (let i = 0; i < count; i++) {
    neighbours[fill[from[i] as number]!++] = to[i] as number;
    neighbours[fill[to[i] as number]!++] = from[i] as number;
  }
  return { offsets, neighbours };
};

export const loadGraph = (file: URL | string, words: number): WordGraph => decodeGraph(readFileSync(file), words);
