import { type Kernel, type WasmMemory, wasmMemory } from '../wasm/module-bytes.ts';
import { type QuadDots, cosineKernels } from './cosine-kernel.ts';

const PAGE = 65_536;
/**
 * Room for word vectors copied into the memory once and read there by every later call (20k
 * words of 100 dimensions); when it fills, it starts afresh. Copying each candidate word's
 * vector in for every call was most of the JS time of a ranking (about 60 µs a search at 10k
 * bench entries, about 1,300 words).
 */
const ARENA_BYTES = 8 * 1024 * 1024;
/** Beyond this (past the arena), a (pathological) call's table is kept in JS rather than growing a memory that never shrinks. */
const MAX_TABLE_BYTES = 16 * 1024 * 1024;

/**
 * A word's vector, and where a table keeps a copy of it: `home` is its byte offset in the
 * table's memory, valid while `homeGeneration` is the table's (0 is no table's).
 */
export interface HomedVector {
  readonly vector: Float32Array;
  home: number;
  homeGeneration: number;
}

/** Generations are unique across tables, so a word homed in one table is never read from another's memory. */
let lastGeneration = 0;

/**
 * The similarities of one word-by-word ranking: each distinct candidate word's dot products
 * with the query words, a row of `stride` floats per word in `sims`, row r at r·stride, and a
 * text's best match per query word over the rows of its words (`best`). Both are computed in
 * WebAssembly (cosine-kernel.ts) in a memory kept from call to call, or in JS where that
 * cannot be had; both give the same floats to the bit.
 *
 * The memory: the arena of word vectors (ARENA_BYTES), the query words by quads (four words'
 * component d side by side), a text's best matches, then the rows; a text's row numbers go
 * behind the last row for the time of one `best` call.
 */
export class WordSimilarities {
  private readonly dim: number;
  private readonly arenaBytes: number;
  private readonly maxBytes: number;
  private memory: WasmMemory | null | undefined;
  private quadDots: QuadDots | null = null;
  private maxRows: Kernel | null = null;
  private n = 0;
  private quads = 0;
  private qAt = 0;
  private bestAt = 0;
  private simsAt = 0;
  private wasm = false;
  private query: Float32Array = new Float32Array(0);
  /** The arena's words: a view made once per memory, not per word. */
  private arena: Float32Array = new Float32Array(0);
  private arenaUsed = 0;
  private generation = ++lastGeneration;
  private bestView: Float32Array = new Float32Array(0);
  private rows = 0;
  sims: Float32Array = new Float32Array(0);
  stride = 0;

  /**
   * `tableBytes`: the bound of the memory past the arena (beyond it, rows are kept in JS);
   * `arenaBytes`: the room for word vectors kept from call to call.
   */
  constructor(dim: number, tableBytes = MAX_TABLE_BYTES, arenaBytes = ARENA_BYTES) {
    this.dim = dim;
    this.arenaBytes = Math.ceil(arenaBytes / 16) * 16;
    this.maxBytes = this.arenaBytes + tableBytes;
  }

  /** Starts a ranking for these query word vectors (unit length, `dim` each). */
  begin(query: readonly Float32Array[]): void {
    const dim = this.dim;
    this.n = query.length;
    this.quads = Math.ceil(this.n / 4);
    this.stride = this.quads * 4;
    this.rows = 0;
    this.wasm = this.setUpMemory();
    if (this.wasm) {
      const memory = this.memory as WasmMemory;
      const quads = new Float32Array(memory.buffer, this.qAt, this.quads * dim * 4);
      quads.fill(0);
      query.forEach((v, i) => {
        for (let d = 0, at = (i >> 2) * dim * 4 + (i & 3); d < dim; d++, at += 4) quads[at] = v[d] as number;
      });
      this.takeViews();
    } else {
      this.query = new Float32Array(this.n * dim);
      query.forEach((v, i) => this.query.set(v, i * dim));
      this.sims = new Float32Array(256 * this.stride);
      this.bestView = new Float32Array(this.stride);
    }
  }

  /** Computes `word`'s row (the next one) and returns its index. */
  add(word: HomedVector): number {
    const row = this.rows++;
    if ((row + 1) * this.stride > this.sims.length) this.grow();
    if (this.wasm) {
      (this.quadDots as QuadDots)(this.qAt, this.homeOf(word), this.quads, this.dim, this.simsAt + row * this.stride * 4);
    } else {
      cosines(this.query, this.n, this.dim, word.vector, this.sims, row * this.stride);
    }
    return row;
  }

  /**
   * Where `word`'s vector lies in the memory: copied into the arena the first time it is met
   * since the arena last filled. A full arena starts afresh under a new generation, which
   * leaves every word homed before without a home (their rows, computed already, stay).
   */
  private homeOf(word: HomedVector): number {
    if (word.homeGeneration === this.generation) return word.home;
    const bytes = this.dim * 4;
    if (this.arenaUsed + bytes > this.arenaBytes) {
      this.generation = ++lastGeneration;
      this.arenaUsed = 0;
    }
    this.arena.set(word.vector, this.arenaUsed >> 2);
    word.home = this.arenaUsed;
    word.homeGeneration = this.generation;
    this.arenaUsed += bytes;
    return word.home;
  }

  /**
   * Each query word's best similarity (0 at least) over `rows[0, count)`: a view of `stride`
   * floats, the first n of them the query words', valid until the next call.
   */
  best(rows: Int32Array, count: number): Float32Array {
    const best = this.bestView;
    best.fill(0);
    const stride = this.stride;
    const slotsAt = this.simsAt + this.rows * stride * 4;
    if (this.wasm && this.ensure(slotsAt + count * 4)) {
      // The memory may have grown: views are taken again before use.
      if (this.sims.buffer !== (this.memory as WasmMemory).buffer) this.takeViews();
      new Int32Array((this.memory as WasmMemory).buffer, slotsAt, count).set(rows.subarray(0, count));
      (this.maxRows as Kernel)(slotsAt, count, stride, this.simsAt, this.bestAt);
      return this.bestView;
    }
    const sims = this.sims;
    for (let r = 0; r < count; r++) {
      for (let i = 0, at = (rows[r] as number) * stride; i < stride; i++, at++) if ((sims[at] as number) > (best[i] as number)) best[i] = sims[at] as number;
    }
    return best;
  }

  /** Views of the arena, the best matches and the rows (up to the memory's end or the bound), after the memory is set up or grows. */
  private takeViews(): void {
    const memory = this.memory as WasmMemory;
    this.arena = new Float32Array(memory.buffer, 0, this.arenaBytes >> 2);
    this.bestView = new Float32Array(memory.buffer, this.bestAt, this.stride);
    this.sims = new Float32Array(memory.buffer, this.simsAt, (Math.min(memory.buffer.byteLength, this.maxBytes) - this.simsAt) >> 2);
  }

  /** The arena, the query quads, the best matches, then the rows; true when the memory and kernels serve. */
  private setUpMemory(): boolean {
    if (this.memory === undefined) {
      try {
        this.memory = wasmMemory(16);
        const kernels = cosineKernels(this.memory);
        this.quadDots = kernels?.quadDots ?? null;
        this.maxRows = kernels?.maxRows ?? null;
      } catch {
        this.memory = null;
      }
      if (!this.quadDots) this.memory = null;
    }
    if (!this.memory) return false;
    this.qAt = this.arenaBytes;
    this.bestAt = this.qAt + this.quads * this.dim * 16;
    this.simsAt = this.bestAt + this.stride * 4;
    return this.ensure(this.simsAt + 256 * this.stride * 4);
  }

  private ensure(bytes: number): boolean {
    const memory = this.memory as WasmMemory;
    if (bytes > this.maxBytes) return false;
    if (bytes > memory.buffer.byteLength) memory.grow(Math.ceil((bytes - memory.buffer.byteLength) / PAGE));
    return true;
  }

  private grow(): void {
    const wanted = this.sims.length * 2;
    if (this.wasm && this.ensure(this.simsAt + wanted * 4)) {
      this.takeViews();
      return;
    }
    if (this.wasm) {
      // Past the memory's bound: the rows so far move to JS, and the rest are summed there.
      this.query = new Float32Array(this.n * this.dim);
      const quads = new Float32Array((this.memory as WasmMemory).buffer, this.qAt, this.quads * this.dim * 4);
      for (let i = 0; i < this.n; i++) for (let d = 0; d < this.dim; d++) this.query[i * this.dim + d] = quads[(i >> 2) * this.dim * 4 + d * 4 + (i & 3)] as number;
      this.bestView = new Float32Array(this.stride);
      this.wasm = false;
    }
    const grown = new Float32Array(wanted);
    grown.set(this.sims.subarray(0, Math.min(this.sims.length, wanted)));
    this.sims = grown;
  }
}

/**
 * out[at + i] = query word i's vector · v, for the n query vectors laid end to end in `query`,
 * in float32 steps (each product and each sum rounded to float32, as the kernel's lanes do).
 * Four query words at a time: four independent sums let the processor overlap the additions,
 * where one sum waits on each addition before the next. Each sum still adds its terms in the
 * same order, so every similarity is the same to the bit.
 */
export const cosines = (query: Float32Array, n: number, dim: number, v: Float32Array, out: Float32Array, at: number): void => {
  const f = Math.fround;
  let i = 0;
  for (; i + 4 <= n; i += 4) {
    const o0 = i * dim;
    const o1 = o0 + dim;
    const o2 = o1 + dim;
    const o3 = o2 + dim;
    let s0 = 0;
    let s1 = 0;
    let s2 = 0;
    let s3 = 0;
    for (let k = 0; k < dim; k++) {
      const x = v[k] as number;
      s0 = f(s0 + f((query[o0 + k] as number) * x));
      s1 = f(s1 + f((query[o1 + k] as number) * x));
      s2 = f(s2 + f((query[o2 + k] as number) * x));
      s3 = f(s3 + f((query[o3 + k] as number) * x));
    }
    out[at + i] = s0;
    out[at + i + 1] = s1;
    out[at + i + 2] = s2;
    out[at + i + 3] = s3;
  }
  for (; i < n; i++) {
    let s = 0;
    for (let k = 0, o = i * dim; k < dim; k++) s = f(s + f((query[o + k] as number) * (v[k] as number)));
    out[at + i] = s;
  }
};
