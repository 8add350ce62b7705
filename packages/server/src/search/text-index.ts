import { K1, idf, termScore } from '../search-rules/bm25.ts';
import type { DocTerms } from '../search-rules/entry-text.ts';
import { TopK } from '../search-rules/top-k.ts';

/** Postings of one term: slots holding it and the weighted frequency there (× 10, as integers). */
interface Postings {
  slots: number[];
  tfs: number[];
}

const TF_SCALE = 10;
const MAX_PREFIX_TERMS = 64;
/** Postings longer than this are worth checking whether they can still matter (MaxScore). */
const LONG_LIST = 20_000;

/** Position of `slot` in ascending `slots`, or -1. */
const indexOf = (slots: number[], slot: number): number => {
  let lo = 0;
  let hi = slots.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const at = slots[mid] as number;
    if (at === slot) return mid;
    if (at < slot) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
};

/**
 * The in-process inverted index (filesystem and S3 backends). Documents are slots owned by
 * the caller; a replaced or deleted document is only marked dead, and its postings stay
 * until `compact` — as in Lucene, document frequencies count dead documents until then,
 * which shifts scores a little and saves rewriting postings on every update.
 */
export class TextIndex {
  private readonly postings = new Map<string, Postings>();
  private lengths = new Float32Array(1024);
  private totalLength = 0;
  private liveDocs = 0;
  /** Per-query accumulator, reused: one search runs at a time (no await inside). */
  private scores = new Float64Array(1024);
  private touched: Int32Array = new Int32Array(1024);

  get docCount(): number {
    return this.liveDocs;
  }

  get termCount(): number {
    return this.postings.size;
  }

  add(slot: number, doc: DocTerms): void {
    if (slot >= this.lengths.length) this.grow(slot + 1);
    for (const [term, tf] of doc.tf) {
      let p = this.postings.get(term);
      if (!p) this.postings.set(term, (p = { slots: [], tfs: [] }));
      p.slots.push(slot);
      p.tfs.push(Math.round(tf * TF_SCALE));
    }
    this.lengths[slot] = doc.length;
    this.totalLength += doc.length;
    this.liveDocs += 1;
  }

  /** Each term's postings (slots ascending; frequencies × 10), for saving the index. */
  *terms(): Generator<[string, number[], number[]]> {
    for (const [term, p] of this.postings) yield [term, p.slots, p.tfs];
  }

  lengthOf(slot: number): number {
    return this.lengths[slot] ?? 0;
  }

  /** Take a saved index (an empty one only): every slot below `lengths.length` counts as live. */
  restore(lengths: Float32Array, postings: Iterable<[string, number[], number[]]>): void {
    this.grow(lengths.length);
    this.lengths.set(lengths);
    for (const length of lengths) this.totalLength += length;
    this.liveDocs = lengths.length;
    for (const [term, slots, tfs] of postings) this.postings.set(term, { slots, tfs });
  }

  /** The caller marks the slot dead for scoring; here only the statistics move. */
  remove(slot: number): void {
    this.totalLength -= this.lengths[slot] ?? 0;
    this.liveDocs -= 1;
  }

  docFrequency(term: string): number {
    return this.postings.get(term)?.slots.length ?? 0;
  }

  /** Vocabulary terms starting with any of `prefixes`, most frequent first. */
  expandPrefix(prefixes: readonly string[]): string[] {
    const found: [string, number][] = [];
    for (const [term, p] of this.postings) if (prefixes.some((x) => term.startsWith(x))) found.push([term, p.slots.length]);
    return found.sort((a, b) => b[1] - a[1]).slice(0, MAX_PREFIX_TERMS).map(([t]) => t);
  }

  /**
   * The `n` best live slots by BM25F over `terms`, among those `accept` lets through. `alive`
   * is checked per posting (cheap); `accept` only for slots good enough to enter the top n.
   *
   * Rare terms are scored first. Before each long postings list, if even the most the terms
   * left could add (their upper bounds) cannot lift a slot past the current n-th best, the
   * lists are not scanned: only slots that may still reach the top n are completed, by binary
   * search in the remaining lists (MaxScore). Exact, and common words stop costing a scan.
   */
  search(terms: readonly string[], n: number, alive: Uint8Array, accept: (slot: number) => boolean): { slot: number; score: number }[] {
    // Slots scored so far, in a buffer kept between searches (no garbage per query).
    let touched: Int32Array = this.touched;
    let count = 0;
    const scores = this.scores;
    const average = this.liveDocs > 0 ? this.totalLength / this.liveDocs : 1;
    const lists = terms
      .map((term) => this.postings.get(term))
      .filter((p): p is Postings => p !== undefined)
      .map((p) => {
        const weight = idf(p.slots.length, Math.max(this.liveDocs, p.slots.length));
        return { p, weight, bound: weight * (K1 + 1) };
      })
      .sort((a, b) => b.bound - a.bound);
    let rest = lists.reduce((sum, l) => sum + l.bound, 0);
    let theta = -Infinity;
    let i = 0;
    for (; i < lists.length; i++) {
      const { p, weight, bound } = lists[i] as (typeof lists)[number];
      if (p.slots.length > LONG_LIST && count >= n) {
        theta = this.nthBest(touched, count, n, accept);
        if (rest < theta) break;
      }
      const { slots, tfs } = p;
      for (let j = 0; j < slots.length; j++) {
        const slot = slots[j] as number;
        if (alive[slot] !== 1) continue;
        if (scores[slot] === 0) {
          if (count === touched.length) touched = this.growTouched();
          touched[count++] = slot;
        }
        scores[slot]! += termScore(weight, (tfs[j] as number) / TF_SCALE, this.lengths[slot] as number, average);
      }
      rest -= bound;
    }
    const top = new TopK(n);
    for (let t = 0; t < count; t++) {
      const slot = touched[t] as number;
      let score = scores[slot] as number;
      scores[slot] = 0;
      if (i < lists.length) {
        if (score + rest < theta) continue;
        for (let k = i; k < lists.length; k++) {
          const { p, weight } = lists[k] as (typeof lists)[number];
          const at = indexOf(p.slots, slot);
          if (at >= 0) score += termScore(weight, (p.tfs[at] as number) / TF_SCALE, this.lengths[slot] as number, average);
        }
      }
      if (top.wouldTake(score) && accept(slot)) top.push(slot, score);
    }
    return top.sorted();
  }

  /** The n-th best score so far among slots `accept` lets through (-Infinity with fewer). */
  private nthBest(touched: Int32Array, count: number, n: number, accept: (slot: number) => boolean): number {
    const top = new TopK(n);
    for (let t = 0; t < count; t++) {
      const slot = touched[t] as number;
      const score = this.scores[slot] as number;
      if (top.wouldTake(score) && accept(slot)) top.push(slot, score);
    }
    return top.size < n ? -Infinity : top.min;
  }

  /** Drops postings of dead slots and renumbers them by `remap` (old slot → new, -1 = gone). */
  compact(remap: Int32Array, slotCount: number): void {
    for (const [term, p] of this.postings) {
      const slots: number[] = [];
      const tfs: number[] = [];
      for (let i = 0; i < p.slots.length; i++) {
        const to = remap[p.slots[i] as number] as number;
        if (to >= 0) {
          slots.push(to);
          tfs.push(p.tfs[i] as number);
        }
      }
      if (slots.length === 0) this.postings.delete(term);
      else this.postings.set(term, { slots, tfs });
    }
    const lengths = new Float32Array(Math.max(1024, slotCount));
    for (let old = 0; old < remap.length; old++) if ((remap[old] as number) >= 0) lengths[remap[old] as number] = this.lengths[old] as number;
    this.lengths = lengths;
    this.scores = new Float64Array(lengths.length);
  }

  private growTouched(): Int32Array {
    const grown = new Int32Array(this.touched.length * 2);
    grown.set(this.touched);
    this.touched = grown;
    return grown;
  }

  private grow(min: number): void {
    let size = this.lengths.length;
    while (size < min) size *= 2;
    const lengths = new Float32Array(size);
    lengths.set(this.lengths);
    this.lengths = lengths;
    this.scores = new Float64Array(size);
  }
}
