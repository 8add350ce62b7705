import { grownCapacity } from './capacity.ts';

/**
 * One term's postings: each slot holding the term and its weighted frequency there (× 10,
 * an integer), interleaved in one Int32Array. Eight bytes a posting in one typed array per
 * term, where two JS arrays of numbers took sixteen (and more while growing), and a scan
 * reads one contiguous block.
 */
export class PostingList {
  data: Int32Array;
  count = 0;
  /**
   * How many of these postings are of live documents: the term's document frequency. Postings
   * of replaced or deleted documents stay until a compaction (TextIndex.compact), but counted
   * in the frequency they made a term look common for as long: an entry rewritten five times
   * held its own words at a sixth of their weight. Kept by TextIndex (`add`, `remove`).
   */
  live = 0;
  /**
   * The most one of these postings scores per unit of idf at an average document length of
   * `maxAt` (0: not found yet). Kept by TextIndex (its `maxOf`).
   */
  max = 0;
  maxAt = 0;
  /** The slot numbering these postings are in (TextIndex renumbers a list of an older one when it next reads it). */
  generation = 0;

  constructor(capacity = 1) {
    this.data = new Int32Array(capacity * 2);
  }

  /** Adopt `count` saved pairs (slot, frequency) from `data`. */
  static of(data: Int32Array, count = data.length / 2): PostingList {
    const list = new PostingList(0);
    list.data = data;
    list.count = count;
    // Saved and renumbered lists hold live documents only.
    list.live = count;
    return list;
  }

  push(slot: number, tf: number): void {
    if (this.count * 2 === this.data.length) {
      const grown = new Int32Array(grownCapacity(this.count, this.count + 1) * 2);
      grown.set(this.data);
      this.data = grown;
    }
    this.data[this.count * 2] = slot;
    this.data[this.count * 2 + 1] = tf;
    this.count += 1;
  }

  /** Renumber by `remap` (old slot → new, -1 = gone) in place, dropping the gone; returns the postings left. */
  compact(remap: Int32Array): number {
    const data = this.data;
    let kept = 0;
    for (let i = 0; i < this.count * 2; i += 2) {
      const to = remap[data[i] as number] ?? -1;
      if (to < 0) continue;
      data[kept] = to;
      data[kept + 1] = data[i + 1] as number;
      kept += 2;
    }
    this.count = kept / 2;
    // Every posting kept is of a live document, whatever removals went uncounted (TextIndex.remove).
    this.live = this.count;
    return this.count;
  }

  /** The pairs in use, a view (no copy). */
  get pairs(): Int32Array {
    return this.data.subarray(0, this.count * 2);
  }
}
