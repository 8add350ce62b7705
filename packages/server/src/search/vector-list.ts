/**
 * One list of the inverted file: slot numbers and a copy of their vectors side by side, so a
 * query reads a list's vectors from one contiguous block instead of jumping across the whole
 * index (which costs a cache miss per vector).
 */
export class VectorList {
  slots: Int32Array;
  vectors: Float32Array;
  count = 0;
  private readonly dim: number;

  constructor(dim: number, capacity = 16) {
    this.dim = dim;
    this.slots = new Int32Array(capacity);
    this.vectors = new Float32Array(capacity * dim);
  }

  push(slot: number, data: Float32Array, at: number): void {
    if (this.count === this.slots.length) {
      const slots = new Int32Array(this.slots.length * 2);
      slots.set(this.slots);
      const vectors = new Float32Array(slots.length * this.dim);
      vectors.set(this.vectors);
      this.slots = slots;
      this.vectors = vectors;
    }
    this.slots[this.count] = slot;
    this.vectors.set(data.subarray(at, at + this.dim), this.count * this.dim);
    this.count += 1;
  }

  /** A copy under new slot numbers (old → new, -1 = gone). */
  remap(remap: Int32Array): VectorList {
    const out = new VectorList(this.dim, Math.max(16, this.count));
    for (let j = 0; j < this.count; j++) {
      const to = remap[this.slots[j] as number] ?? -1;
      if (to >= 0) out.push(to, this.vectors, j * this.dim);
    }
    return out;
  }
}
