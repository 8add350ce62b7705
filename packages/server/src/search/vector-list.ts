import { grownCapacity } from './capacity.ts';

/**
 * One list of the inverted file: slot numbers and a copy of their vectors side by side, so a
 * query reads a list's vectors from one contiguous block instead of jumping across the whole
 * index (which costs a cache miss per vector). The copies are int8 codes (the largest
 * component of each vector maps to ±127) with one scale per vector: a quarter of the memory
 * of floats, and close enough to choose candidates that the index then ranks exactly.
 */
export class VectorList {
  slots: Int32Array;
  codes: Int8Array;
  scales: Float32Array;
  count = 0;
  /** The renumbering of the slots this list's numbers follow (ivf-lists.ts renumbers lists when first read). */
  generation = 0;
  /** The last search that read this list (vector-index.ts), so a wider pass of it reads it once. */
  mark = 0;
  private readonly dim: number;

  constructor(dim: number, capacity = 16) {
    this.dim = dim;
    this.slots = new Int32Array(capacity);
    this.codes = new Int8Array(capacity * dim);
    this.scales = new Float32Array(capacity);
  }

  /**
   * A list on arrays it adopts (a saved list's rows, search/index-snapshot.ts), not recomputed:
   * the first `count` rows are in use, the rest is room.
   */
  static of(dim: number, slots: Int32Array, codes: Int8Array, scales: Float32Array, count = slots.length): VectorList {
    const list = new VectorList(dim, 0);
    list.slots = slots;
    list.codes = codes;
    list.scales = scales;
    list.count = count;
    return list;
  }

  push(slot: number, data: Float32Array, at: number): void {
    const j = this.room();
    this.slots[j] = slot;
    this.scales[j] = quantize(data, at, this.dim, this.codes, j * this.dim);
  }

  /** Renumber by `remap` (old slot → new, -1 = gone) in place, dropping the rows of gone slots. */
  compact(remap: Int32Array): void {
    const dim = this.dim;
    let kept = 0;
    for (let j = 0; j < this.count; j++) {
      const to = remap[this.slots[j] as number] ?? -1;
      if (to < 0) continue;
      if (kept !== j) {
        this.scales[kept] = this.scales[j] as number;
        this.codes.copyWithin(kept * dim, j * dim, (j + 1) * dim);
      }
      this.slots[kept] = to;
      kept += 1;
    }
    this.count = kept;
  }

  /** The index of a new last row, growing the arrays when full. */
  private room(): number {
    if (this.count === this.slots.length) {
      const capacity = grownCapacity(this.slots.length, this.count + 1);
      const slots = new Int32Array(capacity);
      slots.set(this.slots);
      const codes = new Int8Array(capacity * this.dim);
      codes.set(this.codes);
      const scales = new Float32Array(capacity);
      scales.set(this.scales);
      this.slots = slots;
      this.codes = codes;
      this.scales = scales;
    }
    return this.count++;
  }
}

/**
 * Writes the `dim` components of `data` from `at` as int8 codes into `codes` from `codeAt`,
 * the largest in magnitude as ±127, and answers the scale (a component is its code times the
 * scale, within half a scale).
 */
export const quantize = (data: Float32Array, at: number, dim: number, codes: Int8Array, codeAt: number): number => {
  let max = 0;
  for (let d = 0; d < dim; d++) max = Math.max(max, Math.abs(data[at + d] as number));
  const scale = max > 0 ? max / 127 : 1;
  for (let d = 0; d < dim; d++) codes[codeAt + d] = Math.round((data[at + d] as number) / scale);
  return scale;
};
