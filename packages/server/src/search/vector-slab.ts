import { type WasmMemory, wasmMemory } from '../wasm/module-bytes.ts';
import { type Dots, dotKernels } from './dot-kernel.ts';

const PAGE = 65_536;
/** A wasm32 memory ends at 4 GiB; past this, rows live in an ordinary array (scanned in JS). */
const MAX_WASM_BYTES = 3 * 2 ** 30;

/**
 * Rows of `dim` floats, one per slot, in a WebAssembly memory so that dot-kernel.ts can scan
 * them where they lie. Behind the rows, scratch room for a query and one score per row.
 * Growing the memory detaches the views taken before: `data` is always current, but a view
 * kept across `grow` reads nothing, so callers take it again after anything that may grow.
 * Without WebAssembly SIMD, or with dimensions that are not a multiple of 4, or beyond
 * MAX_WASM_BYTES, the rows live in a plain Float32Array and `dotsWith` answers null.
 */
export class VectorSlab {
  readonly dim: number;
  data: Float32Array;
  private rows: number;
  private memory: WasmMemory | null = null;
  private dots: Dots | null = null;

  /** `wasm: false`: rows in a plain array from the start. */
  constructor(dim: number, rows: number, wasm = true) {
    this.dim = dim;
    this.rows = rows;
    if (wasm && dim % 4 === 0 && this.bytesFor(rows) <= MAX_WASM_BYTES) {
      try {
        const memory = wasmMemory(Math.ceil(this.bytesFor(rows) / PAGE));
        this.dots = dotKernels(memory)?.dots ?? null;
        if (this.dots) this.memory = memory;
      } catch {
        // No room for a memory (an address-space limit): the plain array serves.
      }
    }
    this.data = this.memory ? new Float32Array(this.memory.buffer, 0, rows * dim) : new Float32Array(rows * dim);
  }

  /** A slab over `data` as it is, in a plain array: no copy (a million vectors are 400 MB). */
  static adopt(dim: number, data: Float32Array): VectorSlab {
    const slab = new VectorSlab(dim, 0, false);
    slab.data = data;
    slab.rows = data.length / dim;
    return slab;
  }

  get bytes(): number {
    return this.memory ? this.memory.buffer.byteLength : this.data.byteLength;
  }

  /** Room for `rows` rows, contents kept (new rows zero). */
  grow(rows: number): void {
    if (rows <= this.rows) return;
    const old = this.rows;
    this.rows = rows;
    if (this.memory && this.bytesFor(rows) <= MAX_WASM_BYTES) {
      try {
        const pages = Math.ceil(this.bytesFor(rows) / PAGE) - this.memory.buffer.byteLength / PAGE;
        if (pages > 0) this.memory.grow(pages);
        this.data = new Float32Array(this.memory.buffer, 0, rows * this.dim);
        // What lay behind the old rows was scratch.
        this.data.fill(0, old * this.dim);
        return;
      } catch {
        // The memory cannot grow further: on to a plain array.
      }
    }
    const data = new Float32Array(rows * this.dim);
    data.set(this.data.subarray(0, old * this.dim));
    this.data = data;
    this.memory = null;
    this.dots = null;
  }

  /**
   * The dot products (float32) of `q` with rows [0, count), a view valid until the next call
   * or growth; null when rows are scanned in JS.
   */
  dotsWith(q: Float32Array, count: number): Float32Array | null {
    if (!this.memory || !this.dots) return null;
    const at = this.rows * this.dim * 4;
    new Float32Array(this.memory.buffer, at, this.dim).set(q);
    const out = at + this.dim * 4;
    this.dots(at, 0, Math.min(count, this.rows), this.dim, out);
    return new Float32Array(this.memory.buffer, out, Math.min(count, this.rows));
  }

  /**
   * The dot products (float32) of `q` with the rows in [from, to) where `marks[row] === mark`,
   * at [row - from] of the answer (a view valid until the next call or growth; the other rows'
   * places hold nothing meaningful), each run of consecutive such rows in one call of the
   * kernel; null when rows are scanned in JS.
   */
  dotsWhere(q: Float32Array, marks: Int32Array, mark: number, from: number, to: number): Float32Array | null {
    if (!this.memory || !this.dots) return null;
    to = Math.min(to, this.rows);
    const dim = this.dim;
    const at = this.rows * dim * 4;
    new Float32Array(this.memory.buffer, at, dim).set(q);
    const out = at + dim * 4;
    for (let row = from; row < to; ) {
      if (marks[row] !== mark) {
        row += 1;
        continue;
      }
      let end = row + 1;
      while (end < to && marks[end] === mark) end += 1;
      this.dots(at, row * dim * 4, end - row, dim, out + (row - from) * 4);
      row = end;
    }
    return new Float32Array(this.memory.buffer, out, Math.max(0, to - from));
  }

  private bytesFor(rows: number): number {
    return (rows * this.dim + this.dim + rows) * 4;
  }
}
