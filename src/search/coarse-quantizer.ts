import { random } from './seeded-random.ts';

/** Dot product of `a` (at `ai`) and `b` (at `bi`) over `dim` components. */
export const dot = (a: Float32Array, ai: number, b: Float32Array, bi: number, dim: number): number => {
  let s = 0;
  for (let d = 0; d < dim; d++) s += (a[ai + d] as number) * (b[bi + d] as number);
  return s;
};

/** Spherical k-means (unit vectors, dot product) over `n` rows of `data`; `k` unit centroids. */
const kmeans = (data: Float32Array, rows: number[], dim: number, k: number, iterations: number, seed: number): Float32Array => {
  const rand = random(seed);
  const centroids = new Float32Array(k * dim);
  for (let c = 0; c < k; c++) {
    const row = rows[Math.floor(rand() * rows.length)] as number;
    centroids.set(data.subarray(row * dim, row * dim + dim), c * dim);
  }
  const sums = new Float64Array(k * dim);
  for (let it = 0; it < iterations; it++) {
    sums.fill(0);
    for (const row of rows) {
      let best = 0;
      let bestScore = -Infinity;
      for (let c = 0; c < k; c++) {
        const s = dot(data, row * dim, centroids, c * dim, dim);
        if (s > bestScore) [best, bestScore] = [c, s];
      }
      for (let d = 0; d < dim; d++) sums[best * dim + d]! += data[row * dim + d] as number;
    }
    for (let c = 0; c < k; c++) {
      let norm = 0;
      for (let d = 0; d < dim; d++) norm += (sums[c * dim + d] as number) ** 2;
      // An empty cluster keeps its centroid rather than collapsing to zero.
      if (norm === 0) continue;
      for (let d = 0; d < dim; d++) centroids[c * dim + d] = (sums[c * dim + d] as number) / Math.sqrt(norm);
    }
  }
  return centroids;
};

const topIndexes = (scores: Float64Array, count: number): number[] =>
  [...scores.keys()].sort((a, b) => (scores[b] as number) - (scores[a] as number)).slice(0, count);

/**
 * A two-level coarse quantizer for inverted-file (IVF) vector search: `c1` top centroids,
 * each with `c2` centroids of its own, so `c1 × c2` lists cost `c1 + c2` dot products to
 * assign a vector, and training is two small k-means runs on a sample rather than one big
 * one. Deterministic (seeded), so every replica builds the same lists from the same data.
 */
export class CoarseQuantizer {
  readonly lists: number;
  private readonly dim: number;
  private readonly c1: number;
  private readonly c2: number;
  private readonly top: Float32Array;
  private readonly second: Float32Array[];

  constructor(data: Float32Array, sample: number[], dim: number, lists: number) {
    this.dim = dim;
    this.c1 = Math.max(1, Math.round(Math.sqrt(lists)));
    this.c2 = Math.max(1, Math.ceil(lists / this.c1));
    this.lists = this.c1 * this.c2;
    this.top = kmeans(data, sample, dim, this.c1, 8, 1);
    const members: number[][] = Array.from({ length: this.c1 }, () => []);
    for (const row of sample) members[this.nearest(this.top, this.c1, data, row * dim)]?.push(row);
    this.second = members.map((rows, i) => (rows.length > 0 ? kmeans(data, rows, dim, this.c2, 8, 2 + i) : this.top.slice(i * dim, i * dim + dim).fill(0)));
  }

  /** The list a vector belongs to. */
  assign(data: Float32Array, at: number): number {
    const t = this.nearest(this.top, this.c1, data, at);
    return t * this.c2 + this.nearest(this.second[t] as Float32Array, this.c2, data, at);
  }

  /** Lists in the order a query should scan them, nearest first (the best `topCells` top cells only). */
  order(query: Float32Array, topCells = 4): number[] {
    topCells = Math.min(topCells, this.c1);
    const topScores = new Float64Array(this.c1);
    for (let c = 0; c < this.c1; c++) topScores[c] = dot(query, 0, this.top, c * this.dim, this.dim);
    const scored: [number, number][] = [];
    for (const t of topIndexes(topScores, topCells)) {
      const cell = this.second[t] as Float32Array;
      for (let c = 0; c < this.c2; c++) scored.push([t * this.c2 + c, dot(query, 0, cell, c * this.dim, this.dim)]);
    }
    return scored.sort((a, b) => b[1] - a[1]).map(([list]) => list);
  }

  private nearest(centroids: Float32Array, k: number, data: Float32Array, at: number): number {
    let best = 0;
    let bestScore = -Infinity;
    for (let c = 0; c < k; c++) {
      const s = dot(data, at, centroids, c * this.dim, this.dim);
      if (s > bestScore) [best, bestScore] = [c, s];
    }
    return best;
  }
}
