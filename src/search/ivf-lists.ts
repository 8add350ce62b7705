import { CoarseQuantizer } from './coarse-quantizer.ts';
import { VectorList } from './vector-list.ts';

/** Below this many vectors an exact scan is fast enough (about 2 ms); lists start above it. */
export const TRAIN_AT = 20_000;
/** Lists are retrained (in the background) when the index has grown this many times since. */
const RETRAIN_GROWTH = 4;
const VECTORS_PER_LIST = 500;
const SAMPLE = 20_000;
const CHUNK = 20_000;

interface Build {
  quantizer: CoarseQuantizer;
  lists: VectorList[];
  next: number;
}

/**
 * The inverted file of the in-process vector index: every vector filed under its nearest
 * centroid, so a query scans the few lists nearest to it instead of every vector, and its cost
 * stays nearly flat as the index grows. Trained on a sample once the index passes TRAIN_AT,
 * and again as it grows; the vectors are refiled in slices between requests while the
 * previous lists keep answering.
 */
export class IvfLists {
  private quantizer: CoarseQuantizer | null = null;
  private lists: VectorList[] = [];
  private build: Build | null = null;
  private trainedAt = 0;

  get ready(): boolean {
    return this.quantizer !== null;
  }

  /** File a new vector (slot) whose components start at `at` in `data`. */
  add(slot: number, data: Float32Array, at: number, size: number, has: () => Uint8Array, dim: number, all: () => Float32Array): void {
    if (this.quantizer) this.lists[this.quantizer.assign(data, at)]?.push(slot, data, at);
    if (!this.build && size >= Math.max(TRAIN_AT, this.trainedAt * RETRAIN_GROWTH)) this.train(size, has, dim, all);
  }

  /** Lists nearest to `query` first; `wide` ranks every list (for heavily filtered queries). */
  order(query: Float32Array, wide: boolean): VectorList[] {
    if (!this.quantizer) return [];
    return this.quantizer.order(query, wide ? Number.MAX_SAFE_INTEGER : 4).map((i) => this.lists[i] as VectorList);
  }

  /** After slots were renumbered: refile under the new numbers; an unfinished build starts over. */
  remap(remap: Int32Array): void {
    this.lists = this.lists.map((list) => list.remap(remap));
    this.build = null;
    this.trainedAt = 0;
  }

  private train(size: number, has: () => Uint8Array, dim: number, all: () => Float32Array): void {
    const present: number[] = [];
    const flags = has();
    for (let slot = 0; slot < flags.length; slot++) if (flags[slot] === 1) present.push(slot);
    const step = Math.max(1, Math.floor(present.length / SAMPLE));
    const sample = present.filter((_, i) => i % step === 0).slice(0, SAMPLE);
    const lists = Math.min(4096, Math.max(16, Math.round(size / VECTORS_PER_LIST)));
    const quantizer = new CoarseQuantizer(all(), sample, dim, lists);
    this.build = { quantizer, lists: Array.from({ length: quantizer.lists }, () => new VectorList(dim)), next: 0 };
    this.trainedAt = size;
    const build = this.build;
    const step2 = (): void => {
      if (this.build !== build) return;
      const flagsNow = has();
      const data = all();
      const end = Math.min(flagsNow.length, build.next + CHUNK);
      for (let slot = build.next; slot < end; slot++) if (flagsNow[slot] === 1) build.lists[quantizer.assign(data, slot * dim)]?.push(slot, data, slot * dim);
      build.next = end;
      if (end < flagsNow.length) {
        setImmediate(step2);
        return;
      }
      this.quantizer = quantizer;
      this.lists = build.lists;
      this.build = null;
    };
    step2();
  }
}
