import { K1, idf, termScore } from '../search-rules/bm25.ts';
import type { DocTerms } from '../search-rules/entry-text.ts';
import type { PackedPostings } from './index-snapshot.ts';
import { TopK } from '../search-rules/top-k.ts';
import { PostingList } from './posting-list.ts';

const TF_SCALE = 10;
const MAX_PREFIX_TERMS = 64;
/** Postings longer than this are worth checking whether they can still matter (MaxScore). */
const LONG_LIST = 20_000;
/**
 * Completing a slot from a list by binary search costs about this many postings read in
 * order (the probes jump about memory): a list shorter than this many times the slots left
 * is read through instead.
 */
const SCAN_OVER_LOOKUPS = 16;

/** Terms restored between two calls to the pause (the server answers meanwhile). */
const RESTORE_PAUSE_EVERY = 8192;

interface ScoredList {
  p: PostingList;
  weight: number;
  /** The most the term can add to any slot's score: BM25's limit as frequency grows. */
  bound: number;
}

/**
 * The in-process inverted index (filesystem and S3 backends). Documents are slots owned by
 * the caller; a replaced or deleted document is only marked dead, and its postings stay
 * until `compact` — as in Lucene, document frequencies count dead documents until then,
 * which shifts scores a little and saves rewriting postings on every update.
 */
export class TextIndex {
  /** Each term's postings; a restored term not read since is the number of its list in `saved`. */
  private readonly postings = new Map<string, PostingList | number>();
  /** The restored index's postings (see `restore`); null before a restore and after a compaction. */
  private saved: PackedPostings | null = null;
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
      let p = this.list(term);
      if (!p) this.postings.set(term, (p = new PostingList()));
      p.push(slot, Math.round(tf * TF_SCALE));
    }
    this.lengths[slot] = doc.length;
    this.totalLength += doc.length;
    this.liveDocs += 1;
  }

  /** Each term's postings (slot and frequency × 10 pairs, slots ascending), for saving the index. */
  *terms(): Generator<[string, Int32Array]> {
    for (const [term, held] of this.postings) yield [term, this.pairsOf(held)];
  }

  lengthOf(slot: number): number {
    return this.lengths[slot] ?? 0;
  }

  /**
   * Take a saved index (an empty one only): every slot below `lengths.length` counts as live.
   * Each term maps to the number of its list in the saved block, and becomes a list of its
   * own when first read (`list`): a million terms, most of them rare and never searched, cost
   * a million map entries and nothing more.
   */
  async restore(lengths: Float32Array, postings: PackedPostings, pause: () => Promise<void> = async () => {}): Promise<void> {
    this.grow(lengths.length);
    this.lengths.set(lengths);
    for (const length of lengths) this.totalLength += length;
    this.liveDocs = lengths.length;
    this.saved = postings;
    const terms = postings.terms;
    for (let i = 0; i < terms.length; i++) {
      this.postings.set(terms[i] as string, i);
      if (i % RESTORE_PAUSE_EVERY === 0) await pause();
    }
  }

  /** The caller marks the slot dead for scoring; here only the statistics move. */
  remove(slot: number): void {
    this.totalLength -= this.lengths[slot] ?? 0;
    this.liveDocs -= 1;
  }

  docFrequency(term: string): number {
    const held = this.postings.get(term);
    return held === undefined ? 0 : this.countOf(held);
  }

  /** Vocabulary terms starting with any of `prefixes`, most frequent first. */
  expandPrefix(prefixes: readonly string[]): string[] {
    const found: [string, number][] = [];
    for (const [term, held] of this.postings) if (prefixes.some((x) => term.startsWith(x))) found.push([term, this.countOf(held)]);
    return found.sort((a, b) => b[1] - a[1]).slice(0, MAX_PREFIX_TERMS).map(([t]) => t);
  }

  /**
   * The `n` best live slots by BM25F over `terms` (a term's idf scaled by its entry in
   * `weights`, 1 when absent), among those `accept` lets through. `alive`
   * is checked per posting (cheap); `accept` only for slots good enough to enter the top n.
   *
   * Rare terms are scored first. Before each long postings list, if even the most the terms
   * left could add (their upper bounds) cannot lift an unseen slot past the current n-th best,
   * no new slot can enter the top n (MaxScore): the lists left only complete the slots already
   * seen (`complete`). Exact, and common words stop adding candidates.
   */
  search(terms: readonly string[], n: number, alive: Uint8Array, accept: (slot: number) => boolean, weights?: ReadonlyMap<string, number>): { slot: number; score: number }[] {
    // Slots scored so far, in a buffer kept between searches (no garbage per query).
    let touched: Int32Array = this.touched;
    let count = 0;
    const scores = this.scores;
    const average = this.liveDocs > 0 ? this.totalLength / this.liveDocs : 1;
    const lists: ScoredList[] = terms
      .map((term) => ({ p: this.list(term), scale: weights?.get(term) ?? 1 }))
      .filter((t): t is { p: PostingList; scale: number } => t.p !== undefined)
      .map(({ p, scale }) => {
        const weight = scale * idf(p.count, Math.max(this.liveDocs, p.count));
        return { p, weight, bound: weight * (K1 + 1) };
      })
      .sort((a, b) => b.bound - a.bound);
    let rest = lists.reduce((sum, l) => sum + l.bound, 0);
    // The n-th best so far can only have grown by the bounds of the lists scored since it was
    // last found: while `rest` is at least that much, it cannot be below it, and finding it
    // (a pass over every slot touched) is skipped. At 1M entries that skips 89 of 501 passes
    // over the bench's 202 queries; what is left is mostly the postings scan itself.
    let thetaAtMost = Infinity;
    let i = 0;
    for (; i < lists.length; i++) {
      const { p, weight, bound } = lists[i] as ScoredList;
      if (p.count > LONG_LIST && count >= n && rest < thetaAtMost) {
        const theta = this.nthBest(touched, count, n, accept);
        if (rest < theta) {
          count = this.complete(lists.slice(i), touched, count, n, theta, average, accept);
          break;
        }
        thetaAtMost = theta;
      }
      const { data } = p;
      const end = p.count * 2;
      for (let j = 0; j < end; j += 2) {
        const slot = data[j] as number;
        if (alive[slot] !== 1) continue;
        if (scores[slot] === 0) {
          if (count === touched.length) touched = this.growTouched();
          touched[count++] = slot;
        }
        scores[slot]! += termScore(weight, (data[j + 1] as number) / TF_SCALE, this.lengths[slot] as number, average);
      }
      rest -= bound;
      thetaAtMost += bound;
    }
    const top = new TopK(n);
    let bar = top.bar;
    for (let t = 0; t < count; t++) {
      const slot = touched[t] as number;
      const score = scores[slot] as number;
      scores[slot] = 0;
      if (!(score > bar) || !accept(slot)) continue;
      top.push(slot, score);
      bar = top.bar;
    }
    return top.sorted();
  }

  /**
   * Adds the lists left to the `count` slots in `touched` whose partial scores could still
   * reach `theta` (a lower bound of the n-th best final score), list by list: before each, a
   * slot that cannot reach the n-th best even with every list left at its bound is dropped
   * (its score reset), and the n-th best is raised from the scores so far. A list long next
   * to the slots left is scanned once; a short one is searched per slot. Returns how many
   * slots are left at the front of `touched`.
   */
  private complete(left: ScoredList[], touched: Int32Array, count: number, n: number, theta: number, average: number, accept: (slot: number) => boolean): number {
    const scores = this.scores;
    const lengths = this.lengths;
    let rest = left.reduce((sum, l) => sum + l.bound, 0);
    for (const { p, weight, bound } of left) {
      let kept = 0;
      for (let t = 0; t < count; t++) {
        const slot = touched[t] as number;
        if ((scores[slot] as number) + rest < theta) scores[slot] = 0;
        else touched[kept++] = slot;
      }
      count = kept;
      if (count === 0) break;
      const data = p.data;
      if (p.count <= count * SCAN_OVER_LOOKUPS) {
        // Only slots still in play have a score above zero (every term's score is positive).
        const end = p.count * 2;
        for (let j = 0; j < end; j += 2) {
          const slot = data[j] as number;
          if ((scores[slot] as number) > 0) scores[slot]! += termScore(weight, (data[j + 1] as number) / TF_SCALE, lengths[slot] as number, average);
        }
      } else {
        for (let t = 0; t < count; t++) {
          const slot = touched[t] as number;
          const at = p.indexOf(slot);
          if (at >= 0) scores[slot]! += termScore(weight, (data[at * 2 + 1] as number) / TF_SCALE, lengths[slot] as number, average);
        }
      }
      rest -= bound;
      theta = Math.max(theta, this.nthBest(touched, count, n, accept));
    }
    return count;
  }

  /** The n-th best score so far among slots `accept` lets through (-Infinity with fewer). */
  private nthBest(touched: Int32Array, count: number, n: number, accept: (slot: number) => boolean): number {
    const top = new TopK(n);
    const scores = this.scores;
    let bar = top.bar;
    for (let t = 0; t < count; t++) {
      const slot = touched[t] as number;
      const score = scores[slot] as number;
      if (!(score > bar) || !accept(slot)) continue;
      top.push(slot, score);
      bar = top.bar;
    }
    return bar;
  }

  /** Drops postings of dead slots and renumbers them by `remap` (old slot → new, -1 = gone). */
  compact(remap: Int32Array, slotCount: number): void {
    for (const [term, held] of this.postings) {
      const pairs = this.pairsOf(held);
      const kept = new PostingList(0);
      for (let i = 0; i < pairs.length; i += 2) {
        const to = remap[pairs[i] as number] as number;
        if (to >= 0) kept.push(to, pairs[i + 1] as number);
      }
      if (kept.count === 0) this.postings.delete(term);
      else this.postings.set(term, kept);
    }
    this.saved = null;
    const lengths = new Float32Array(Math.max(1024, slotCount));
    for (let old = 0; old < remap.length; old++) if ((remap[old] as number) >= 0) lengths[remap[old] as number] = this.lengths[old] as number;
    this.lengths = lengths;
    this.scores = new Float64Array(lengths.length);
  }

  /** A term's postings as a list, made from the restored block on first read. */
  private list(term: string): PostingList | undefined {
    const held = this.postings.get(term);
    if (typeof held !== 'number') return held;
    // A view: the block stays while any restored list is read from it, so a copy would only
    // add memory. A list that grows moves to an array of its own (PostingList.push).
    const list = PostingList.of(this.pairsOf(held));
    this.postings.set(term, list);
    return list;
  }

  /** The (slot, frequency) pairs held for a term, without making a list of a restored one. */
  private pairsOf(held: PostingList | number): Int32Array {
    if (typeof held !== 'number') return held.pairs;
    const [start, end] = this.savedRange(held);
    return (this.saved as PackedPostings).pairs.subarray(start, end);
  }

  private countOf(held: PostingList | number): number {
    if (typeof held !== 'number') return held.count;
    const [start, end] = this.savedRange(held);
    return (end - start) / 2;
  }

  private savedRange(i: number): [number, number] {
    const { ends } = this.saved as PackedPostings;
    return [i === 0 ? 0 : (ends[i - 1] as number), ends[i] as number];
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
