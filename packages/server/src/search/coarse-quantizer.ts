import { random } from './seeded-random.ts';
import { yieldTurns } from '../event-loop.ts';

/** Dot product of `a` (at `ai`) and `b` (at `bi`) over `dim` components. */
export const dot = (a: Float32Array, ai: number, b: Float32Array, bi: number, dim: number): number => {
  let s = 0;
  for (let d = 0; d < dim; d++) s += (a[ai + d] as number) * (b[bi + d] as number);
  return s;
};

/**
 * Vector–centroid dot products between yields while training: a few milliseconds of work
 * (100,000 held the event loop for 30–50 ms at 100 dimensions, training starting from a
 * write at 20,000 entries).
 */
const SLICE = 15_000;

/**
 * Spherical k-means (unit vectors, dot product) over `rows` of `data`; `k` unit centroids.
 * A generator that yields every SLICE dot products, so that training on a large sample runs
 * in slices between requests instead of holding the event loop for a second.
 */
function* kmeans(data: Float32Array, rows: number[], dim: number, k: number, iterations: number, seed: number): Generator<void, Float32Array> {
  const rand = random(seed);
  const centroids = new Float32Array(k * dim);
  for (let c = 0; c < k; c++) {
    const row = rows[Math.floor(rand() * rows.length)] as number;
    centroids.set(data.subarray(row * dim, row * dim + dim), c * dim);
  }
  const sums = new Float64Array(k * dim);
  let work = 0;
  for (let it = 0; it < iterations; it++) {
    sums.fill(0);
    for (const row of rows) {
      const best = nearest(centroids, k, data, row * dim, dim);
      for (let d = 0; d < dim; d++) sums[best * dim + d]! += data[row * dim + d] as number;
      work += k;
      if (work >= SLICE) {
        work = 0;
        yield;
      }
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
}

/** Run a sliced computation to its end, one slice per turn of the event loop. */
export const runInSlices = <T>(work: Generator<void, T>): Promise<T> =>
  new Promise((resolve, reject) => {
    const step = (): void => {
      try {
        const next = work.next();
        if (next.done) resolve(next.value);
        else void yieldTurns().then(step);
      } catch (error) {
        reject(error);
      }
    };
    step();
  });

/** The centroid (of `k`) nearest the vector at `at` in `data`. */
const nearest = (centroids: Float32Array, k: number, data: Float32Array, at: number, dim: number): number => {
  let best = 0;
  let bestScore = -Infinity;
  for (let c = 0; c < k; c++) {
    const s = dot(data, at, centroids, c * dim, dim);
    if (s > bestScore) {
      best = c;
      bestScore = s;
    }
  }
  return best;
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

  private constructor(dim: number, c1: number, c2: number, top: Float32Array, second: Float32Array[]) {
    this.dim = dim;
    this.c1 = c1;
    this.c2 = c2;
    this.lists = c1 * c2;
    this.top = top;
    this.second = second;
  }

  /** Train on the `sample` rows of `data` for about `lists` lists, in slices (see runInSlices). */
  static *train(data: Float32Array, sample: number[], dim: number, lists: number): Generator<void, CoarseQuantizer> {
    const c1 = Math.max(1, Math.round(Math.sqrt(lists)));
    const c2 = Math.max(1, Math.ceil(lists / c1));
    const top = yield* kmeans(data, sample, dim, c1, 8, 1);
    const members: number[][] = Array.from({ length: c1 }, () => []);
    for (const [i, row] of sample.entries()) {
      members[nearest(top, c1, data, row * dim, dim)]?.push(row);
      if ((i + 1) % Math.max(1, Math.floor(SLICE / c1)) === 0) yield;
    }
    const second: Float32Array[] = [];
    for (const [i, rows] of members.entries()) {
      second.push(rows.length > 0 ? yield* kmeans(data, rows, dim, c2, 8, 2 + i) : new Float32Array(c2 * dim));
    }
    return new CoarseQuantizer(dim, c1, c2, top, second);
  }

  /** `train` on every row of `data`. */
  static trainOnAll(data: Float32Array, dim: number, lists: number): Generator<void, CoarseQuantizer> {
    return CoarseQuantizer.train(data, Array.from({ length: data.length / dim }, (_, i) => i), dim, lists);
  }

  /** The centroids, for saving (see `restore`). */
  get parts(): { c1: number; c2: number; top: Float32Array; second: Float32Array[] } {
    return { c1: this.c1, c2: this.c2, top: this.top, second: this.second };
  }

  /** A quantizer as `parts` described it: the same lists for the same vectors, no training. */
  static restore(dim: number, c1: number, c2: number, top: Float32Array, second: Float32Array[]): CoarseQuantizer {
    return new CoarseQuantizer(dim, c1, c2, top, second);
  }

  /** The list a vector belongs to. */
  assign(data: Float32Array, at: number): number {
    const t = nearest(this.top, this.c1, data, at, this.dim);
    return t * this.c2 + nearest(this.second[t] as Float32Array, this.c2, data, at, this.dim);
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
}
