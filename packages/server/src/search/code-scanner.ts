import { type WasmMemory, wasmMemory } from '../wasm/module-bytes.ts';
import { type Dots, dotKernels } from './dot-kernel.ts';

const PAGE = 65_536;

/**
 * Dot products of one query with the int8 codes of the inverted lists it visits, in
 * WebAssembly SIMD (dot-kernel.ts `dots8`). The lists keep their codes in ordinary arrays
 * (they grow one by one, and are rebuilt at every training); a list is copied into this
 * memory to be scanned, which costs far less than scanning it in JS. Memory: the query, the
 * largest list scanned so far and one score per row of it.
 */
export class CodeScanner {
  private readonly dim: number;
  private readonly memory: WasmMemory;
  private readonly dots8: Dots;
  private rows = 0;
  private query: Float32Array = new Float32Array(0);

  private constructor(dim: number, memory: WasmMemory, dots8: Dots) {
    this.dim = dim;
    this.memory = memory;
    this.dots8 = dots8;
  }

  /** A scanner for `dim` dimensions, or null (not a multiple of 4, or no WebAssembly SIMD). */
  static for(dim: number): CodeScanner | null {
    if (dim % 4 !== 0) return null;
    try {
      const memory = wasmMemory(1);
      const kernels = dotKernels(memory);
      return kernels ? new CodeScanner(dim, memory, kernels.dots8) : null;
    } catch {
      return null;
    }
  }

  /** The query of the scans that follow (a unit vector of `dim` floats). */
  use(query: Float32Array): void {
    this.query = query;
    this.fit(this.rows);
  }

  /** `codes` rows [0, count) dotted with the query (before their scale): a view valid until the next call. */
  scan(codes: Int8Array, count: number): Float32Array {
    this.fit(count);
    const dim = this.dim;
    const codesAt = dim * 4 + this.rows * 4;
    new Int8Array(this.memory.buffer, codesAt, count * dim).set(codes.subarray(0, count * dim));
    this.dots8(0, codesAt, count, dim, dim * 4);
    return new Float32Array(this.memory.buffer, dim * 4, count);
  }

  /** Room for `rows` rows: the query first, then the scores, then the codes. */
  private fit(rows: number): void {
    if (rows > this.rows) {
      const need = this.dim * 4 + rows * 4 + rows * this.dim;
      const pages = Math.ceil(need / PAGE) - this.memory.buffer.byteLength / PAGE;
      if (pages > 0) this.memory.grow(pages);
      this.rows = rows;
    }
    new Float32Array(this.memory.buffer, 0, this.dim).set(this.query);
  }
}
