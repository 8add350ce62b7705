import { TopK } from '../search-rules/top-k.ts';
import type { CoarseQuantizer } from './coarse-quantizer.ts';
import { grownCapacity } from './capacity.ts';
import { CodeScanner } from './code-scanner.ts';
import { IvfLists } from './ivf-lists.ts';
import type { VectorList } from './vector-list.ts';
import { VectorSlab } from './vector-slab.ts';

/**
 * Vectors a listed search scans at least (more when filters reject many). Measured on the
 * bench corpus (built-in embedder, 200 queries, 50 candidates each, against an exact scan): of
 * the exact 10 nearest, 12,000 found 83 % at 100k entries and 49 % at 1M; 24,000 finds 91 % and
 * 56 %, for about 0.25 ms more per search at 1M (vector p50 0.78 → 1.05 ms); 48,000, 95 % at
 * 100k for 0.7 ms more there.
 */
const SCAN_AT_LEAST = 24_000;
/** Candidates beyond the `n` asked for that the exact vectors rank (at least twice `n`). */
const RERANK_EXTRA = 16;

/**
 * Unit vectors by slot in one flat block of floats (vector-slab.ts), searched by cosine
 * similarity (a dot product of normalized vectors). Up to 20k vectors the scan is exact, its
 * dot products computed in WebAssembly SIMD (dot-kernel.ts); above, an inverted file
 * (ivf-lists.ts) limits it to the lists nearest the query, so a search costs about the same
 * at a million entries as at twenty thousand, at the price of sometimes missing a neighbour
 * filed under a farther list. One index holds one embedder's vectors: dimensions never mix.
 */
export class VectorIndex {
  readonly dimension: number;
  readonly embedderId: string;
  private slab: VectorSlab;
  /** 1 where the slot holds a vector. */
  private has: Uint8Array;
  private readonly ivf = new IvfLists();
  /** Scans the lists' codes in WebAssembly SIMD; null where that cannot be had (JS scans). */
  private readonly scanner: CodeScanner | null;
  size = 0;

  constructor(embedderId: string, dimension: number, capacity = 1024) {
    this.embedderId = embedderId;
    this.dimension = dimension;
    this.slab = new VectorSlab(dimension, capacity);
    this.has = new Uint8Array(capacity);
    this.scanner = CodeScanner.for(dimension);
  }

  /** Whether searches go through the inverted lists (trained) rather than an exact scan. */
  get listed(): boolean {
    return this.ivf.ready;
  }

  get bytes(): number {
    return this.slab.bytes + this.has.byteLength;
  }

  set(slot: number, vector: Float32Array): void {
    if (vector.length !== this.dimension) throw new Error(`vector has ${vector.length} dimensions, the index ${this.dimension}`);
    if (slot >= this.has.length) this.grow(slot + 1);
    let norm = 0;
    for (let d = 0; d < vector.length; d++) norm += (vector[d] as number) ** 2;
    const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
    const base = slot * this.dimension;
    const data = this.slab.data;
    for (let d = 0; d < vector.length; d++) data[base + d] = (vector[d] as number) * scale;
    const added = this.has[slot] !== 1;
    this.has[slot] = 1;
    if (added) {
      this.size += 1;
      this.ivf.add(slot, data, base, this.size, () => this.has, this.dimension, () => this.slab.data);
    }
  }

  /** Whether a slot holds a vector (no view made, unlike `vectorOf`). */
  holds(slot: number): boolean {
    return this.has[slot] === 1;
  }

  /** The stored (normalized) vector of a slot, a view valid until the next `set`; null when it has none. */
  vectorOf(slot: number): Float32Array | null {
    if (this.has[slot] !== 1) return null;
    return this.slab.data.subarray(slot * this.dimension, (slot + 1) * this.dimension);
  }

  /** The inverted file's quantizer and lists, for saving; null before training. */
  filing(): ReturnType<IvfLists['saved']> {
    return this.ivf.saved();
  }

  /**
   * Take saved vectors (an empty index only): `data` holds `dimension` per slot, `has` says
   * which; with `filing`, the inverted lists as saved, else they are trained anew.
   */
  restore(data: Float32Array, has: Uint8Array, filing: { quantizer: CoarseQuantizer; lists: VectorList[] } | null = null): void {
    // Listed vectors are scanned through the lists, never exactly: adopted as they are, not
    // copied (a million are 400 MB). Unlisted ones go where the exact scan's kernel reads them.
    if (filing && has.length >= 1024) this.slab = VectorSlab.adopt(this.dimension, data);
    else {
      this.slab = new VectorSlab(this.dimension, Math.max(1024, has.length));
      this.slab.data.set(data.subarray(0, has.length * this.dimension));
    }
    this.has = has;
    if (has.length < 1024) {
      this.has = new Uint8Array(1024);
      this.has.set(has);
    }
    this.size = has.reduce((n, h) => n + h, 0);
    if (filing) this.ivf.restore(filing.quantizer, filing.lists, this.has, this.slab.data, this.dimension, this.size);
    else this.ivf.trainIfGrown(this.size, () => this.has, this.dimension, () => this.slab.data);
  }

  delete(slot: number): void {
    if (this.has[slot] === 1) this.size -= 1;
    this.has[slot] = 0;
  }

  search(query: Float32Array, n: number, alive: Uint8Array, accept: (slot: number) => boolean): { slot: number; score: number }[] {
    const dim = this.dimension;
    const q = new Float32Array(dim);
    let norm = 0;
    for (let d = 0; d < dim; d++) norm += (query[d] as number) ** 2;
    if (norm === 0) return [];
    for (let d = 0; d < dim; d++) q[d] = (query[d] as number) / Math.sqrt(norm);
    const top = new TopK(n);
    const data = this.slab.data;
    const has = this.has;
    const consider = (slot: number): void => {
      if (has[slot] !== 1 || alive[slot] !== 1) return;
      const base = slot * dim;
      let dot = 0;
      for (let d = 0; d < dim; d++) dot += (data[base + d] as number) * (q[d] as number);
      if (top.wouldTake(dot) && accept(slot)) top.push(slot, dot);
    };
    if (this.ivf.ready) {
      // The lists' int8 codes choose candidates; a few more than asked for are then ranked by
      // their exact vectors, so quantization moves no result that the floats would keep.
      const rough = new TopK(Math.max(2 * n, n + RERANK_EXTRA));
      const scanner = this.scanner;
      scanner?.use(q);
      let scanned = 0;
      for (const wide of [false, true]) {
        // The nearest cells first; only when filters leave too few, every list (wide).
        for (const list of this.ivf.order(q, wide)) {
          const { slots, codes, scales, count } = list;
          // A row's dot product is sum × scale × unit: the kernel's sums (in units of the
          // integer query) meet the bar in those units, so only the rows kept are multiplied
          // out. Without the kernel, JS sums in floats (unit 1).
          const sums = scanner?.scan(codes, count);
          const unit = scanner ? scanner.unit : 1;
          let bar = rough.bar / unit;
          for (let j = 0; j < count; j++) {
            let sum = 0;
            if (sums) sum = sums[j] as number;
            else for (let d = 0, base = j * dim; d < dim; d++) sum += (codes[base + d] as number) * (q[d] as number);
            const scaled = sum * (scales[j] as number);
            if (!(scaled > bar)) continue;
            const slot = slots[j] as number;
            if (has[slot] !== 1 || alive[slot] !== 1 || !accept(slot)) continue;
            rough.push(slot, scaled * unit);
            bar = rough.bar / unit;
          }
          scanned += count;
          if (scanned >= SCAN_AT_LEAST && rough.size >= n) break;
        }
        if (rough.size >= n) break;
        if (!wide) {
          rough.clear();
          scanned = 0;
        }
      }
      for (const { slot } of rough.sorted()) consider(slot);
      return top.sorted();
    }
    const slots = Math.min(has.length, alive.length);
    const dots = this.slab.dotsWith(q, slots);
    if (!dots) {
      for (let slot = 0; slot < slots; slot++) consider(slot);
      return top.sorted();
    }
    // The kernel's float32 sums choose a few more than asked for; `consider` ranks those by
    // the same double-precision sums as ever, so the answer is what the JS scan answered.
    const rough = new TopK(Math.max(2 * n, n + RERANK_EXTRA));
    // The score is the surest test: most slots fall below the bar and are never looked up.
    let bar = rough.bar;
    for (let slot = 0; slot < slots; slot++) {
      const dot = dots[slot] as number;
      if (!(dot > bar) || has[slot] !== 1 || alive[slot] !== 1 || !accept(slot)) continue;
      rough.push(slot, dot);
      bar = rough.bar;
    }
    for (const { slot } of rough.sorted()) consider(slot);
    return top.sorted();
  }

  /** Renumber by `remap` (old slot → new, -1 = gone) in place: the slab keeps its room, so new slots need not grow it. */
  compact(remap: Int32Array, slotCount: number): void {
    const dim = this.dimension;
    const data = this.slab.data;
    const has = this.has;
    // Slots only move down: a row is read before anything is written over it. Slots past the
    // end of `has` hold no vector, and the slot moved down to must say so too.
    for (let old = 0; old < remap.length; old++) {
      const to = remap[old] as number;
      if (to < 0) continue;
      const held = old < has.length ? (has[old] as number) : 0;
      if (held === 1 && to !== old) data.copyWithin(to * dim, old * dim, old * dim + dim);
      if (to < has.length) has[to] = held;
    }
    has.fill(0, slotCount);
    this.ivf.remap(remap);
  }

  private grow(min: number): void {
    const capacity = grownCapacity(this.has.length, min);
    this.slab.grow(capacity);
    const has = new Uint8Array(capacity);
    has.set(this.has);
    this.has = has;
  }
}
