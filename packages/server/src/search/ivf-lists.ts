import { slicer } from './byte-codec.ts';
import { CoarseQuantizer } from './coarse-quantizer.ts';
import { trainQuantizer } from './train-quantizer.ts';
import { VectorList } from './vector-list.ts';

/** Below this many vectors an exact scan is fast enough (about 2 ms); lists start above it. */
export const TRAIN_AT = 20_000;
/** Lists are retrained (in the background) when the index has grown this many times since. */
const RETRAIN_GROWTH = 4;
const VECTORS_PER_LIST = 500;
const SAMPLE = 20_000;
/**
 * Top cells whose lists a query ranks (of about √lists). Measured on the bench corpus (built-in
 * embedder, 200 queries, 50 candidates, against an exact scan), scanning the same number of
 * vectors: 4 cells found 91 % of the exact 10 nearest at 100k, 8 found 94 % (56 → 57 % at 1M,
 * where the scan, not the cells, is the limit). Ranking more second-level centroids costs a few
 * hundred dot products.
 */
const TOP_CELLS = 8;
/** How long one slice of a renumbering's sweep over the lists may hold the event loop. */
const SWEEP_SLICE_MS = 3;
/** Slots refiled per turn of the event loop after training: a few milliseconds of assigning. */
const CHUNK = 2_000;

/**
 * The vectors the lists are filed from, as the vector index keeps them: which slots hold one,
 * and where in its block of floats a slot's components start (rows are not slots: a
 * renumbering of the slots moves no vector).
 */
export interface VectorRows {
  /** Per slot, the row of `data()` its vector's components fill (-1: none). Taken again after anything that may grow it. */
  rowOf(): Int32Array;
  /** The current block of floats, `dim` per row (a view kept across a growth reads nothing). */
  data(): Float32Array;
}

/** A training and refiling in progress; replaced (or dropped) to abandon it. */
interface Build {
  /** Slots below this one are refiled; a vector set there from now on must be filed in `filed` too. */
  next: number;
  /** Once trained: the new quantizer and the lists being filed. */
  quantizer?: CoarseQuantizer;
  filed?: VectorList[];
}

/**
 * The inverted file of the in-process vector index: every vector filed under its nearest
 * centroid, so a query scans the few lists nearest to it instead of every vector, and its cost
 * stays nearly flat as the index grows. Trained on a sample once the index passes TRAIN_AT,
 * and again as it grows; training and refiling both run in slices between requests while
 * the previous lists (or, the first time, the exact scan) keep answering.
 */
export class IvfLists {
  private quantizer: CoarseQuantizer | null = null;
  private lists: VectorList[] = [];
  private build: Build | null = null;
  private trainedAt = 0;
  /** Renumberings of the slots so far; a list of an earlier one is renumbered when next read. */
  private generation = 0;
  /** The renumbering not yet applied to every list, which a sweep finishes between requests. */
  private renumbering: { remap: Int32Array } | null = null;

  get ready(): boolean {
    return this.quantizer !== null;
  }

  /** File a new vector (slot) whose components start at `at` in `data`. */
  add(slot: number, data: Float32Array, at: number, size: number, rows: VectorRows, dim: number): void {
    if (this.quantizer) this.current(this.lists[this.quantizer.assign(data, at)])?.push(slot, data, at);
    // A refiling under way has passed this slot (its vector came late, or changed): the new
    // lists take it now, or it would be in none of them once they replace the old ones.
    const build = this.build;
    if (build?.quantizer && build.filed && slot < build.next) build.filed[build.quantizer.assign(data, at)]?.push(slot, data, at);
    this.trainIfGrown(size, rows, dim);
  }

  /** Start a training (in the background) once the index has grown enough since the last. */
  trainIfGrown(size: number, rows: VectorRows, dim: number): void {
    if (!this.build && size >= Math.max(TRAIN_AT, this.trainedAt * RETRAIN_GROWTH)) this.train(size, rows, dim);
  }

  /** The trained quantizer and its lists as they are, for saving; null before training. */
  saved(): { quantizer: CoarseQuantizer; lists: readonly VectorList[] } | null {
    this.finishRenumbering();
    return this.quantizer ? { quantizer: this.quantizer, lists: this.lists } : null;
  }

  /**
   * Lists as saved, adopted whole, so a restart neither trains, assigns nor quantizes; a
   * present slot no saved list holds (a vector added while the lists were retrained) is filed
   * under its nearest list. The next training waits for 4× growth.
   */
  restore(quantizer: CoarseQuantizer, lists: VectorList[], rows: VectorRows, dim: number, size: number): void {
    const rowOf = rows.rowOf();
    const data = rows.data();
    const filed = new Uint8Array(rowOf.length);
    for (const list of lists) for (let j = 0; j < list.count; j++) filed[list.slots[j] as number] = 1;
    const unfiled: Array<[slot: number, list: number]> = [];
    const extra = new Int32Array(lists.length);
    for (let slot = 0; slot < rowOf.length; slot++) {
      if ((rowOf[slot] as number) < 0 || filed[slot] === 1) continue;
      const list = quantizer.assign(data, (rowOf[slot] as number) * dim);
      unfiled.push([slot, list]);
      extra[list]! += 1;
    }
    if (unfiled.length > 0) lists = withRoom(lists, extra, dim);
    for (const [slot, list] of unfiled) lists[list]?.push(slot, data, (rowOf[slot] as number) * dim);
    for (const list of lists) list.generation = this.generation;
    this.quantizer = quantizer;
    this.lists = lists;
    this.build = null;
    this.trainedAt = size;
  }

  /** Lists nearest to `query` first; `wide` ranks every list (for heavily filtered queries). */
  order(query: Float32Array, wide: boolean): VectorList[] {
    if (!this.quantizer) return [];
    return this.quantizer.order(query, wide ? Number.MAX_SAFE_INTEGER : TOP_CELLS).map((i) => this.current(this.lists[i]) as VectorList);
  }

  /**
   * After slots were renumbered. The centroids still hold (a vector's list does not depend on
   * its number), so the next training still waits for growth; an unfinished build is dropped
   * and starts over. Each list is renumbered in place when next read (a search, a new vector
   * filed in it, a save) or by a sweep over the rest in slices between requests: renumbering
   * every list at once (dropping the codes of gone slots, moving the rest) took about 40 ms of
   * the renumbering's pause at a million vectors.
   */
  remap(remap: Int32Array): void {
    this.finishRenumbering();
    this.generation += 1;
    const renumbering = { remap };
    this.renumbering = renumbering;
    this.build = null;
    void this.sweep(renumbering);
  }

  /** `list` in the current numbering: renumbered now if the last renumbering has not reached it. */
  private current(list: VectorList | undefined): VectorList | undefined {
    if (list && this.renumbering && list.generation !== this.generation) {
      list.compact(this.renumbering.remap);
      list.generation = this.generation;
    }
    return list;
  }

  /** Renumber the lists no read has reached, in slices between requests, from the next turn on. */
  private async sweep(renumbering: { remap: Int32Array }): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    const pause = slicer(SWEEP_SLICE_MS);
    for (let i = 0; i < this.lists.length; i++) {
      // A later renumbering finished this one first.
      if (this.renumbering !== renumbering) return;
      this.current(this.lists[i]);
      await pause();
    }
    if (this.renumbering === renumbering) this.renumbering = null;
  }

  /** Renumber every list the sweep has not reached yet (before the next renumbering, or a save). */
  private finishRenumbering(): void {
    if (!this.renumbering) return;
    for (const list of this.lists) this.current(list);
    this.renumbering = null;
  }

  private train(size: number, rows: VectorRows, dim: number): void {
    const present: number[] = [];
    const rowOf = rows.rowOf();
    for (let slot = 0; slot < rowOf.length; slot++) if ((rowOf[slot] as number) >= 0) present.push(slot);
    const step = Math.max(1, Math.floor(present.length / SAMPLE));
    const sample = present.filter((_, i) => i % step === 0).slice(0, SAMPLE);
    const lists = Math.min(4096, Math.max(16, Math.round(size / VECTORS_PER_LIST)));
    const build: Build = { next: 0 };
    this.build = build;
    // The sample is copied: training runs on another thread (or across many turns), while the
    // vectors' memory may grow (which leaves earlier views of it empty) or be renumbered. A
    // sample is taken when asked for, from the rows as they are then.
    const copy = (): Float32Array => {
      const all = rows.data();
      const rowOfNow = rows.rowOf();
      const out = new Float32Array(sample.length * dim);
      let n = 0;
      for (const slot of sample) {
        const row = rowOfNow[slot] ?? -1;
        if (row < 0) continue;
        out.set(all.subarray(row * dim, row * dim + dim), n * dim);
        n += 1;
      }
      return out.subarray(0, n * dim);
    };
    void trainQuantizer(copy, dim, lists).then((quantizer) => {
      const filed = Array.from({ length: quantizer.lists }, () => new VectorList(dim));
      build.quantizer = quantizer;
      build.filed = filed;
      const refile = (): void => {
        if (this.build !== build) return;
        const rowOfNow = rows.rowOf();
        const data = rows.data();
        const end = Math.min(rowOfNow.length, build.next + CHUNK);
        for (let slot = build.next; slot < end; slot++) {
          const row = rowOfNow[slot] as number;
          if (row >= 0) filed[quantizer.assign(data, row * dim)]?.push(slot, data, row * dim);
        }
        build.next = end;
        if (end < rowOfNow.length) {
          setImmediate(refile);
          return;
        }
        for (const list of filed) list.generation = this.generation;
        this.quantizer = quantizer;
        this.lists = filed;
        this.build = null;
        this.trainedAt = size;
      };
      refile();
    });
  }
}

/**
 * The same lists copied into one block per kind of row, each with room for `extra[i]` more
 * rows: filing the few vectors a saved index left out then grows no list (growing each of
 * thousands of lists allocates thousands of arrays).
 */
const withRoom = (lists: readonly VectorList[], extra: Int32Array, dim: number): VectorList[] => {
  let rows = 0;
  lists.forEach((list, i) => {
    rows += list.count + (extra[i] as number);
  });
  const slots = new Int32Array(rows);
  const codes = new Int8Array(rows * dim);
  const scales = new Float32Array(rows);
  let at = 0;
  return lists.map((list, i) => {
    const n = list.count + (extra[i] as number);
    slots.set(list.slots.subarray(0, list.count), at);
    codes.set(list.codes.subarray(0, list.count * dim), at * dim);
    scales.set(list.scales.subarray(0, list.count), at);
    const copy = VectorList.of(dim, slots.subarray(at, at + n), codes.subarray(at * dim, (at + n) * dim), scales.subarray(at, at + n), list.count);
    at += n;
    return copy;
  });
};
