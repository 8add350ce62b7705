import { type WasmMemory, wasmMemory } from '../wasm/module-bytes.ts';
import { grownCapacity } from './capacity.ts';
import { type Dots, dotKernels } from './dot-kernel.ts';
import { quantize } from './vector-list.ts';

const PAGE = 65_536;
/** Bytes the kernel's last load of a row may reach past it (dot-kernel.ts `dots8`). */
const SLACK = 16;

/**
 * Dot products of one query with rows of int8 codes, in WebAssembly SIMD (dot-kernel.ts
 * `dots8`, sixteen products a step against the query rounded to 16-bit integers: its rounding
 * moves a dot by about 1e-5 of its size). Two uses, one scanner each:
 *
 * - the inverted lists' codes (`scan`): the lists keep them in ordinary arrays (they grow one
 *   by one, and are rebuilt at every training), and a list is copied into this memory to be
 *   scanned, which costs far less than scanning it in JS;
 * - codes held here for good (`hold`, `scanHeld`): the exact scan's copy of every vector, a
 *   quarter of the floats' bytes, which at 10k vectors of 100 dimensions (1 MB) stays in a
 *   core's cache where the floats (4 MB) do not.
 *
 * Memory: the query, the codes (room for `rows`) and the bytes the last row's load may reach,
 * then one score per row.
 */
export class CodeScanner {
  private readonly dim: number;
  /** The query's bytes: 2 per component, padded with zeros to a multiple of 16 components. */
  private readonly queryBytes: number;
  private readonly memory: WasmMemory;
  private readonly dots8: Dots;
  private rows = 0;
  private query: Int16Array;
  /**
   * The largest integer a query component becomes: 32,767, or less where 127 × it × the padded
   * dimension would pass 2^31 (from about 520 dimensions), so that no sum can overflow the
   * kernel's 32-bit integers whatever the codes (at 1,536 dimensions, 11,007: still 14 bits).
   */
  private readonly top: number;
  private unitWorth = 0;
  /** The scale of each held row: its components are its codes times its scale, within half a scale. */
  scales = new Float32Array(0);
  /** The largest scale ever held: bounds how far a held row's dot is from its codes' (errorBound). */
  private maxScale = 0;

  private constructor(dim: number, memory: WasmMemory, dots8: Dots) {
    this.dim = dim;
    this.queryBytes = Math.ceil(dim / 16) * 32;
    this.query = new Int16Array(this.queryBytes / 2);
    this.top = Math.min(32_767, Math.floor(2 ** 31 / (127 * this.query.length)) - 1);
    this.memory = memory;
    this.dots8 = dots8;
  }

  /** What one unit of the integer query is worth: a scan's sums times this are the dot products. */
  get unit(): number {
    return this.unitWorth;
  }

  get bytes(): number {
    return this.memory.buffer.byteLength + this.scales.byteLength;
  }

  /** A scanner for `dim` dimensions, or null where WebAssembly SIMD is not available. */
  static for(dim: number): CodeScanner | null {
    try {
      const memory = wasmMemory(1);
      const kernels = dotKernels(memory);
      return kernels ? new CodeScanner(dim, memory, kernels.dots8) : null;
    } catch {
      return null;
    }
  }

  /** The query of the scans that follow (`dim` floats), rounded to integers of at most `top`. */
  use(query: Float32Array): void {
    let max = 0;
    for (let d = 0; d < this.dim; d++) max = Math.max(max, Math.abs(query[d] as number));
    this.unitWorth = max / this.top;
    this.query.fill(0);
    if (max > 0) for (let d = 0; d < this.dim; d++) this.query[d] = Math.round((query[d] as number) / this.unitWorth);
    this.fit(this.rows);
  }

  /**
   * `codes` rows [0, count) dotted with the integer query (before their scale, and in units
   * of `unit`): a view valid until the next call. The caller multiplies only the few it keeps.
   * Held rows, if any, are overwritten.
   */
  scan(codes: Int8Array, count: number): Float32Array {
    this.fit(count);
    new Int8Array(this.memory.buffer, this.queryBytes, count * this.dim).set(codes.subarray(0, count * this.dim));
    return this.dotsOf(count);
  }

  /** Holds row `row` as the codes of the `dim` floats of `data` from `at` (its scale in `scales`). */
  hold(row: number, data: Float32Array, at: number): void {
    if (row >= this.rows) this.fit(grownCapacity(this.rows, row + 1));
    if (row >= this.scales.length) {
      const scales = new Float32Array(this.rows);
      scales.set(this.scales);
      this.scales = scales;
    }
    const scale = quantize(data, at, this.dim, new Int8Array(this.memory.buffer), this.queryBytes + row * this.dim);
    this.scales[row] = scale;
    this.maxScale = Math.max(this.maxScale, scale);
  }

  /** Held rows [0, count) dotted with the integer query, as `scan` answers. */
  scanHeld(count: number): Float32Array {
    return this.dotsOf(Math.min(count, this.rows));
  }

  /**
   * How far from `query`'s dot product with a held row (both of length at most 1) that row's
   * sum × unit × scale can be: each code is within half its scale of its component, each query
   * integer within half a unit of its component, and float32 holds the integer sum to 2^-24.
   */
  errorBound(query: Float32Array): number {
    let l1 = 0;
    for (let d = 0; d < this.dim; d++) l1 += Math.abs(query[d] as number);
    return (l1 * this.maxScale) / 2 + (this.unitWorth / 2) * 127 * this.maxScale * this.dim + 1e-6;
  }

  private dotsOf(count: number): Float32Array {
    const scoresAt = this.scoresAt();
    this.dots8(0, this.queryBytes, count, this.dim, scoresAt);
    return new Float32Array(this.memory.buffer, scoresAt, count);
  }

  /** Behind the codes and their slack, on a 16-byte boundary (a float view needs 4). */
  private scoresAt(): number {
    return Math.ceil((this.queryBytes + this.rows * this.dim + SLACK) / 16) * 16;
  }

  /** Room for `rows` rows (codes kept where they are; the scores move behind them); the query written. */
  private fit(rows: number): void {
    if (rows > this.rows) {
      this.rows = rows;
      const need = this.scoresAt() + rows * 4;
      const pages = Math.ceil(need / PAGE) - this.memory.buffer.byteLength / PAGE;
      if (pages > 0) this.memory.grow(pages);
    }
    new Int16Array(this.memory.buffer, 0, this.query.length).set(this.query);
  }
}
