import { type WasmMemory, wasmMemory } from '../wasm/module-bytes.ts';
import { type Dots, dotKernels } from './dot-kernel.ts';

const PAGE = 65_536;

/**
 * Dot products of one query with the int8 codes of the inverted lists it visits, in
 * WebAssembly SIMD (dot-kernel.ts `dots8`, eight products a step against the query rounded to
 * 16-bit integers: its rounding moves a dot by about 1e-5 of its size, and the exact vectors
 * rank the candidates again anyway). The lists keep their codes in ordinary arrays (they grow
 * one by one, and are rebuilt at every training); a list is copied into this memory to be
 * scanned, which costs far less than scanning it in JS. Memory: the query, one score per row
 * of the largest list scanned so far, then its codes and 8 bytes the last row's load may reach.
 */
export class CodeScanner {
  private readonly dim: number;
  /** The query's bytes: 2 per component, padded with zeros to a multiple of 8 components. */
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

  private constructor(dim: number, memory: WasmMemory, dots8: Dots) {
    this.dim = dim;
    this.queryBytes = Math.ceil(dim / 8) * 16;
    this.query = new Int16Array(this.queryBytes / 2);
    this.top = Math.min(32_767, Math.floor(2 ** 31 / (127 * this.query.length)) - 1);
    this.memory = memory;
    this.dots8 = dots8;
  }

  /** What one unit of the integer query is worth: a scan's sums times this are the dot products. */
  get unit(): number {
    return this.unitWorth;
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
   */
  scan(codes: Int8Array, count: number): Float32Array {
    this.fit(count);
    const dim = this.dim;
    const scoresAt = this.queryBytes;
    const codesAt = scoresAt + this.rows * 4;
    new Int8Array(this.memory.buffer, codesAt, count * dim).set(codes.subarray(0, count * dim));
    this.dots8(0, codesAt, count, dim, scoresAt);
    return new Float32Array(this.memory.buffer, scoresAt, count);
  }

  /** Room for `rows` rows: the query first, then the scores, then the codes and the slack after them. */
  private fit(rows: number): void {
    if (rows > this.rows) {
      const need = this.queryBytes + rows * 4 + rows * this.dim + 8;
      const pages = Math.ceil(need / PAGE) - this.memory.buffer.byteLength / PAGE;
      if (pages > 0) this.memory.grow(pages);
      this.rows = rows;
    }
    new Int16Array(this.memory.buffer, 0, this.query.length).set(this.query);
  }
}
