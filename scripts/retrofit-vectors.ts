import type { WordGraph } from '../packages/server/src/embed/word-graph.ts';
import type { WordTable } from '../packages/server/src/embed/word-table.ts';

const ITERATIONS = 10;

/**
 * Retrofitting (Faruqui et al. 2015): each word of the lexical graph moves towards its
 * neighbours while staying near where its corpus vector put it — qᵢ = (q̂ᵢ + Σⱼ qⱼ / degᵢ) / 2,
 * ten rounds — so WordNet's synonyms and kinds end up close ("physician" by "doctor",
 * "grandma" by "grandmother") even where GloVe saw them in different company. Each moved
 * vector keeps its original length. Run at build time (scripts/distill-wordnet.ts, a few
 * seconds); answers the moved rows and their new vectors.
 */
export const retrofit = (table: WordTable, graph: WordGraph): { rows: number[]; vectors: Float32Array } => {
  const dim = table.dimension;
  const words = table.scales.length;
  const { offsets } = graph;
  // Only words with neighbours move: a dense index of them keeps the float copy small.
  const node = new Int32Array(words).fill(-1);
  const rows: number[] = [];
  for (let r = 0; r < words; r++) if ((offsets[r + 1] as number) > (offsets[r] as number)) node[r] = rows.push(r) - 1;
  const original = new Float32Array(rows.length * dim);
  rows.forEach((r, n) => {
    const scale = table.scales[r] as number;
    for (let d = 0; d < dim; d++) original[n * dim + d] = (table.components[r * dim + d] as number) * scale;
  });
  const buffers = [original.slice(), new Float32Array(original.length)];
  for (let iteration = 0; iteration < ITERATIONS; iteration++) {
    smooth(original, buffers[iteration % 2] as Float32Array, buffers[(iteration + 1) % 2] as Float32Array, rows, node, graph, dim);
  }
  const current = buffers[ITERATIONS % 2] as Float32Array;
  rows.forEach((_, n) => {
    // Averaging shortens vectors; the original length keeps each word's pull in a sentence.
    let before = 0;
    let after = 0;
    for (let d = 0; d < dim; d++) {
      before += (original[n * dim + d] as number) ** 2;
      after += (current[n * dim + d] as number) ** 2;
    }
    const stretch = Math.sqrt(before / (after || 1));
    for (let d = 0; d < dim; d++) current[n * dim + d]! *= stretch;
  });
  return { rows, vectors: current };
};

/** One retrofitting step: `next` from `current`, each word half its own corpus vector, half its neighbours' mean. */
const smooth = (original: Float32Array, current: Float32Array, next: Float32Array, rows: readonly number[], node: Int32Array, graph: WordGraph, dim: number): void => {
  const { offsets, neighbours } = graph;
  for (let n = 0; n < rows.length; n++) {
    const r = rows[n] as number;
    const start = offsets[r] as number;
    const end = offsets[r + 1] as number;
    const beta = 1 / (end - start);
    const at = n * dim;
    for (let d = 0; d < dim; d++) next[at + d] = original[at + d] as number;
    for (let k = start; k < end; k++) {
      const from = (node[neighbours[k] as number] as number) * dim;
      for (let d = 0; d < dim; d++) next[at + d] = (next[at + d] as number) + beta * (current[from + d] as number);
    }
    for (let d = 0; d < dim; d++) next[at + d] = (next[at + d] as number) / 2;
  }
};
