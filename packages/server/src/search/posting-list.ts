import { grownCapacity } from './capacity.ts';

/**
 * One term's postings: each slot holding the term and its weighted frequency there (× 10,
 * an integer), interleaved in one Int32Array. Eight bytes a posting in one typed array per
 * term, where two JS arrays of numbers took sixteen (and more while growing), and a scan
 * reads one contiguous block.
 */
/** What an empty list starts from: its first `push` allocates (nothing is ever written here). */
const EMPTY = new Int32Array(0);

export class PostingList {
  count = 0;
  private held: Int32Array | null;
  /** A restored list's pairs still in the saved block, from int `at`: viewed when first read. */
  private block: Int32Array | null = null;
  private at = 0;

  constructor(capacity = 1) {
    this.held = capacity > 0 ? new Int32Array(capacity * 2) : EMPTY;
  }

  /** Adopt `count` saved pairs (slot, frequency) from `data`. */
  static of(data: Int32Array, count = data.length / 2): PostingList {
    const list = new PostingList(0);
    list.held = data;
    list.count = count;
    return list;
  }

  /**
   * Adopt `count` pairs lying in a restored index's shared `block` from int `at`. No view is
   * made until the list is read: a million rare terms cost a million small objects, not a
   * million typed arrays, and most of them are never searched.
   */
  static within(block: Int32Array, at: number, count: number): PostingList {
    const list = new PostingList(0);
    list.held = null;
    list.block = block;
    list.at = at;
    list.count = count;
    return list;
  }

  /** The pairs, slot then frequency, from index 0; valid until the next `push`. */
  get data(): Int32Array {
    if (this.held === null) {
      this.held = (this.block as Int32Array).subarray(this.at, this.at + this.count * 2);
      this.block = null;
    }
    return this.held;
  }

  push(slot: number, tf: number): void {
    let data = this.data;
    if (this.count * 2 === data.length) {
      const grown = new Int32Array(grownCapacity(this.count, this.count + 1) * 2);
      grown.set(data);
      this.held = data = grown;
    }
    data[this.count * 2] = slot;
    data[this.count * 2 + 1] = tf;
    this.count += 1;
  }

  /** Position of `slot` (slots ascend), or -1. */
  indexOf(slot: number): number {
    const data = this.data;
    let lo = 0;
    let hi = this.count - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const at = data[mid * 2] as number;
      if (at === slot) return mid;
      if (at < slot) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  /** The pairs in use, a view (no copy). */
  get pairs(): Int32Array {
    return this.data.subarray(0, this.count * 2);
  }
}
