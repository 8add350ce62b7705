import { K1, idf, lengthNorm } from '../search-rules/bm25.ts';
import type { DocTerms } from '../search-rules/entry-text.ts';
import { slicer } from './byte-codec.ts';
import type { PackedPostings } from './index-snapshot.ts';
import { TopK } from '../search-rules/top-k.ts';
import { PostingList } from './posting-list.ts';

const TF_SCALE = 10;
const PER_TF = 1 / TF_SCALE;
/**
 * A posting's BM25 score (bm25.ts termScore, with `base` and `perLength` from lengthNorm):
 * `gain` is the term's idf × (K1 + 1), `stored` its frequency as the postings hold it.
 */
const postingScore = (gain: number, stored: number, length: number, base: number, perLength: number): number => {
  const tf = stored * PER_TF;
  return (gain * tf) / (tf + base + perLength * length);
};
const MAX_PREFIX_TERMS = 64;
/** Prefix terms looked at for whether the search's scope holds them (expandPrefix). */
const MAX_PREFIX_CHECKS = 4_096;
/**
 * Slots a search adds up at once (see `search`): their scores take 128 KiB, within the
 * second-level cache. Measured at 1M entries against 4,096 (32 KiB, the first-level cache):
 * 16 % less time over the bench's queries, fewer windows to set up; 32k and 64k no better.
 */
const WINDOW = 16_384;
const WINDOW_WORDS = WINDOW / 32;
/**
 * The strongest non-essential list is walked through a window rather than searched once per
 * candidate (`search`) when its postings there are at most this many times the postings the
 * essential lists proposed in it (about the candidates): a posting walked costs a bit test, a
 * search several steps of galloping. 1, 2, 8, 16 and always measured alike at 1M entries; the
 * bound keeps a rare term's few candidates from walking a common term's whole list.
 */
const WALKED_PER_PROPOSED = 8;
/**
 * A list's real maximum is found at an average document length this much above the current:
 * BM25 scores grow with the average, so it stays an upper bound until the average has grown
 * that far.
 */
const MAX_HEADROOM = 1.05;
/** A list's maximum is kept a hair above the real one, so that no rounding in a score can pass it. */
const ROUNDING = 1 + 1e-9;

/** Terms restored between two calls to the pause (the server answers meanwhile): about a millisecond's work. */
const RESTORE_PAUSE_EVERY = 1024;
/** How long one slice of a renumbering's background sweep over the lists may hold the event loop. */
const SWEEP_SLICE_MS = 3;
/** A slot's namespace number once the slot is removed (slot-table.ts numbers namespaces below it). */
export const DEAD_SPACE = 0xffff;
/** Postings counted between two calls to the pause while a restored index's per-namespace frequencies are counted. */
const COUNT_PAUSE_EVERY = 1 << 16;
/**
 * A term's counts per namespace (TextIndex.dfIn): pairs of namespace number and count in a
 * small array (about 50 bytes, where a map took 200) up to this many namespaces, a map beyond.
 */
const PAIRED_SPACES = 8;
type SpaceCounts = number[] | Map<number, number>;

const countOf = (counts: SpaceCounts, space: number): number => {
  if (!Array.isArray(counts)) return counts.get(space) ?? 0;
  for (let i = 0; i < counts.length; i += 2) if (counts[i] === space) return counts[i + 1] as number;
  return 0;
};

/** Adds `delta` to a namespace's count (none below zero); returns the counts, grown into a map when the pairs are full. */
const addCount = (counts: SpaceCounts, space: number, delta: number): SpaceCounts => {
  if (!Array.isArray(counts)) {
    const count = (counts.get(space) ?? 0) + delta;
    if (count > 0) counts.set(space, count);
    else counts.delete(space);
    return counts;
  }
  for (let i = 0; i < counts.length; i += 2) {
    if (counts[i] !== space) continue;
    counts[i + 1] = Math.max(0, (counts[i + 1] as number) + delta);
    return counts;
  }
  if (delta <= 0) return counts;
  if (counts.length < PAIRED_SPACES * 2) {
    counts.push(space, delta);
    return counts;
  }
  const map = new Map<number, number>();
  for (let i = 0; i < counts.length; i += 2) map.set(counts[i] as number, counts[i + 1] as number);
  map.set(space, delta);
  return map;
};

/**
 * A namespace's statistics for BM25: its live documents, their summed length, and a term's
 * live documents there. Scores, bounds, the ceiling and expansions read these only, so that
 * what a namespace holds never moves another namespace's answers.
 */
export interface SpaceStats {
  docs: number;
  average: number;
  df(term: string): number;
}

interface ScoredList {
  p: PostingList;
  weight: number;
  /** BM25's limit for the term as frequency grows: what sorts the lists and splits them. */
  bound: number;
  /** The most the term adds to any slot holding it now (its list's real maximum, or a little above). */
  max: number;
}

/**
 * The in-process inverted index (filesystem and S3 backends). Documents are slots owned by
 * the caller; a replaced or deleted document is only marked dead, and its postings stay
 * until `compact`, which saves rewriting postings on every update. Document frequencies count
 * live documents only (PostingList.live, moved by `remove` with the document's terms), as
 * PostgreSQL's do: counting dead ones, as Lucene does, a word of an entry rewritten five times
 * counted six documents, and its own entry ranked lower for it until the next compaction (not
 * before 10,000 dead documents).
 */
export class TextIndex {
  /** Each term's postings; a restored term not read since is the number of its list in `saved`. */
  private readonly postings = new Map<string, PostingList | number>();
  /** The restored index's postings (see `restore`); null before a restore and after a compaction. */
  private saved: PackedPostings | null = null;
  /** The slot numbering lists are in now; bumped by each compaction. */
  private generation = 0;
  /**
   * A compaction not yet applied to every list: a list of the generation before is renumbered
   * by `remap` when it is next read, and the sweep walks `terms` in slices to reach the rest.
   */
  private renumbering: { remap: Int32Array; terms: MapIterator<string> } | null = null;
  private lengths = new Float32Array(1024);
  private totalLength = 0;
  private liveDocs = 0;
  /**
   * Per slot, its namespace's number (slot-table.ts; DEAD_SPACE once removed), and per
   * namespace number its live documents and their summed length: BM25 counts within the
   * searched namespace only (a key confined to one learnt from its scores how many entries of
   * every other held a word). Two bytes a slot and two numbers a namespace.
   */
  private spaces = new Uint16Array(1024).fill(DEAD_SPACE);
  private readonly docsIn: number[] = [];
  private readonly lengthIn: number[] = [];
  /**
   * The namespace number whose documents are all a term's list counts (PostingList.live) unless
   * `dfIn` holds the term: the first namespace indexed (after a restore, the largest). -1: none yet.
   */
  private base = -1;
  /**
   * Per term held by a namespace other than `base`, its live documents in each namespace. A
   * term gets its entry when a document of another namespace first holds it, from its list's
   * count (all of them `base`'s until then), so a store of one namespace keeps no entry and
   * pays one comparison a document, and a second namespace costs no pass over the postings.
   */
  private readonly dfIn = new Map<string, SpaceCounts>();
  /** A search's scores within its window, and which of them it touched (a bit per slot); reused, as one search runs at a time (no await inside). */
  private readonly window = new Float64Array(WINDOW);
  private readonly touched = new Int32Array(WINDOW_WORDS);

  get docCount(): number {
    return this.liveDocs;
  }

  get termCount(): number {
    return this.postings.size;
  }

  /** Index `doc` at `slot`, a document of namespace number `space` (slot-table.ts namespaceAt). */
  add(slot: number, doc: DocTerms, space = 1): void {
    if (slot >= this.lengths.length) this.grow(slot + 1);
    this.spaces[slot] = space;
    if (this.base < 0) this.base = space;
    this.docsIn[space] = (this.docsIn[space] ?? 0) + 1;
    this.lengthIn[space] = (this.lengthIn[space] ?? 0) + doc.length;
    // Whether a term's count may be apart from its list's (see dfIn).
    const apart = space !== this.base || this.dfIn.size > 0;
    for (const [term, tf] of doc.tf) {
      let p = this.list(term);
      if (!p) {
        p = new PostingList();
        p.generation = this.generation;
        this.postings.set(term, p);
      }
      const stored = Math.round(tf * TF_SCALE);
      p.push(slot, stored);
      if (apart) this.countIn(term, p.live, space, 1);
      p.live += 1;
      if (p.maxAt > 0) {
        const { base, perLength } = lengthNorm(p.maxAt);
        p.max = Math.max(p.max, postingScore(K1 + 1, stored, doc.length, base, perLength) * ROUNDING);
      }
    }
    this.lengths[slot] = doc.length;
    this.totalLength += doc.length;
    this.liveDocs += 1;
  }

  /** Each term's postings (slot and frequency × 10 pairs, slots ascending), for saving the index. */
  *terms(): Generator<[string, Int32Array]> {
    for (const [term, held] of this.postings) {
      const current = this.current(term, held);
      if (current !== undefined) yield [term, this.pairsOf(current)];
    }
  }

  /** Whether a compaction's sweep has lists left to renumber. */
  get sweeping(): boolean {
    return this.renumbering !== null;
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
  async restore(lengths: Float32Array, postings: PackedPostings, pause: () => Promise<void> = async () => {}, spaces?: Uint16Array): Promise<void> {
    this.grow(lengths.length);
    this.lengths.set(lengths);
    for (const length of lengths) this.totalLength += length;
    this.liveDocs = lengths.length;
    // `spaces`: each slot's namespace number (slot-table.ts), all 1 when not given.
    const first = spaces?.[0] ?? 1;
    if (spaces) this.spaces.set(spaces.subarray(0, lengths.length));
    else this.spaces.fill(1, 0, lengths.length);
    let one = true;
    if (spaces) for (let slot = 0; slot < lengths.length && one; slot++) one = spaces[slot] === first;
    if (one) {
      // One namespace (the common case): its figures are the whole index's.
      if (lengths.length > 0) {
        this.base = first;
        this.docsIn[first] = lengths.length;
        this.lengthIn[first] = this.totalLength;
      }
    } else if (spaces) {
      for (let slot = 0; slot < lengths.length; slot++) {
        const space = spaces[slot] as number;
        this.docsIn[space] = (this.docsIn[space] ?? 0) + 1;
        this.lengthIn[space] = (this.lengthIn[space] ?? 0) + (lengths[slot] as number);
      }
      // The largest namespace's terms need no entry of their own.
      this.base = this.docsIn.reduce((best, docs, space) => (docs > (this.docsIn[best] ?? 0) ? space : best), first);
    }
    this.saved = postings;
    const terms = postings.terms;
    for (let i = 0; i < terms.length; i++) {
      this.postings.set(terms[i] as string, i);
      if (i % RESTORE_PAUSE_EVERY === 0) await pause();
    }
    // Several namespaces: the frequencies of the terms others hold, counted now (one pass over the postings).
    if (!one) await this.countBySpace(pause);
  }

  /**
   * The caller marks the slot dead for scoring; here only the statistics move. `doc`: the
   * terms the slot was added with, when the caller still has its entry, so that each term's
   * document frequency drops now rather than at the next compaction. Without it (a slot of a
   * saved index whose entry changed while the server was down) the terms keep counting the
   * slot until then, as every term did before frequencies were kept.
   */
  remove(slot: number, doc?: DocTerms): void {
    this.totalLength -= this.lengths[slot] ?? 0;
    this.liveDocs -= 1;
    const space = this.spaces[slot] as number;
    if (space !== DEAD_SPACE) {
      this.spaces[slot] = DEAD_SPACE;
      this.lengthIn[space] = (this.lengthIn[space] ?? 0) - (this.lengths[slot] ?? 0);
      this.docsIn[space] = (this.docsIn[space] ?? 0) - 1;
    }
    if (!doc) return;
    const apart = space !== DEAD_SPACE && (space !== this.base || this.dfIn.size > 0);
    for (const term of doc.tf.keys()) {
      const p = this.list(term);
      if (!p || p.live === 0) continue;
      if (apart) this.countIn(term, p.live, space, -1);
      p.live -= 1;
    }
  }

  /**
   * The statistics of namespace number `space`, or of the whole index (undefined). For the
   * only namespace of an index they are the whole index's, to the last bit: the same sums,
   * and each term's list's own count.
   */
  statsOf(space?: number): SpaceStats {
    if (space === undefined) return { docs: this.liveDocs, average: this.liveDocs > 0 ? this.totalLength / this.liveDocs : 1, df: (term) => this.docFrequency(term) };
    const docs = this.docsIn[space] ?? 0;
    return { docs, average: docs > 0 ? (this.lengthIn[space] as number) / docs : 1, df: (term) => this.frequencyIn(term, space) };
  }

  /** Live documents of namespace number `space` holding `term`. */
  private frequencyIn(term: string, space: number): number {
    const counts = this.dfIn.size > 0 ? this.dfIn.get(term) : undefined;
    if (counts) return countOf(counts, space);
    return space === this.base ? this.docFrequency(term) : 0;
  }

  /**
   * Adds `delta` to `term`'s live documents in namespace `space`, given its list's count
   * before this change (`live`): the term gets its entry when another namespace than `base`
   * first holds it, with `live` as `base`'s.
   */
  private countIn(term: string, live: number, space: number, delta: number): void {
    const counts = this.dfIn.get(term);
    if (!counts) {
      if (space !== this.base && delta > 0) this.dfIn.set(term, [this.base, live, space, delta]);
      return;
    }
    const added = addCount(counts, space, delta);
    if (added !== counts) this.dfIn.set(term, added);
  }

  /** Count the frequencies of every term some namespace but `base` holds (`dfIn`), from the postings (a restore of several namespaces). */
  private async countBySpace(pause: () => Promise<void>): Promise<void> {
    let counted = 0;
    for (const [term, held] of this.postings) {
      const current = this.current(term, held);
      if (current === undefined) continue;
      const pairs = this.pairsOf(current);
      this.recount(term, pairs);
      counted += pairs.length;
      if (counted >= COUNT_PAUSE_EVERY) {
        counted = 0;
        await pause();
      }
    }
  }

  /** Sets `term`'s entry in `dfIn` from its (slot, frequency) pairs, all of live documents: none when every one is `base`'s. */
  private recount(term: string, pairs: Int32Array): void {
    const spaces = this.spaces;
    const base = this.base;
    let apart = false;
    for (let i = 0; i < pairs.length && !apart; i += 2) {
      const space = spaces[pairs[i] as number] as number;
      apart = space !== base && space !== DEAD_SPACE;
    }
    if (!apart) {
      this.dfIn.delete(term);
      return;
    }
    let counts: SpaceCounts = [];
    for (let i = 0; i < pairs.length; i += 2) {
      const space = spaces[pairs[i] as number] as number;
      if (space !== DEAD_SPACE) counts = addCount(counts, space, 1);
    }
    this.dfIn.set(term, counts);
  }

  /** Live documents holding `term`. */
  docFrequency(term: string): number {
    const held = this.postings.get(term);
    const current = held === undefined ? undefined : this.current(term, held);
    return current === undefined ? 0 : this.liveOf(current);
  }

  /** Live slots holding `term` that `accept` lets through, counted up to `cap`. */
  holders(term: string, cap: number, alive: Uint8Array, accept: (slot: number) => boolean): number {
    const pairs = this.list(term)?.pairs;
    if (!pairs) return 0;
    let found = 0;
    for (let i = 0; i < pairs.length && found < cap; i += 2) {
      const slot = pairs[i] as number;
      if (alive[slot] === 1 && accept(slot)) found += 1;
    }
    return found;
  }

  /**
   * Vocabulary terms starting with any of `prefixes`, most frequent first, at most
   * MAX_PREFIX_TERMS of those `inScope` keeps (a term some entry the search may return holds):
   * counted over the whole index, the commonest words of other namespaces and paths took every
   * place, and a prefix found nothing in a scope whose words were rarer. At most
   * MAX_PREFIX_CHECKS terms are looked at for their scope.
   */
  expandPrefix(prefixes: readonly string[], inScope: (term: string) => boolean = () => true, space?: number): string[] {
    const found: [string, number][] = [];
    // Counted in the searched namespace: another's words neither come first nor take the places.
    if (space !== undefined && space !== this.base && (this.docsIn[space] ?? 0) === 0) return [];
    for (const [term, held] of this.postings) {
      if (!prefixes.some((x) => term.startsWith(x))) continue;
      const current = this.current(term, held);
      if (current === undefined) continue;
      const counts = space !== undefined && this.dfIn.size > 0 ? this.dfIn.get(term) : undefined;
      const count = counts ? countOf(counts, space as number) : space === undefined || space === this.base ? this.liveOf(current) : 0;
      if (count > 0) found.push([term, count]);
    }
    // Equal counts in term order: the map's order is the order terms first came, in any namespace.
    found.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    const kept: string[] = [];
    for (let i = 0; i < found.length && i < MAX_PREFIX_CHECKS && kept.length < MAX_PREFIX_TERMS; i++) {
      const term = (found[i] as [string, number])[0];
      if (inScope(term)) kept.push(term);
    }
    return kept;
  }

  /**
   * The `n` best live slots by BM25F over `terms` (a term's idf scaled by its entry in
   * `weights`, 1 when absent), among those `accept` lets through. `alive` is checked per
   * posting (cheap); `accept` only for slots good enough to enter the top n.
   *
   * MaxScore (Turtle and Flood, 1995), document at a time in windows of slots, as Lucene
   * scores disjunctions. Each term has an upper bound on what it can add to a slot (BM25's limit
   * as frequency grows). Once the n-th best score (the bar) exceeds the summed bounds of the
   * weakest terms, a slot holding only those cannot enter the top n: they stop proposing
   * candidates (non-essential) and are only looked up for the slots the other terms propose,
   * and only while those can still pass the bar. The weakest terms are the commonest, with the
   * longest lists, so most of their postings are skipped; the result is exact.
   *
   * The essential terms are added up window by window into a small array (WINDOW slots, in the
   * second-level cache), then the window's slots are finished in ascending order, which lets the
   * other lists be searched forward from where they stood. Equal scores keep the lower slot.
   * The strongest of the other lists, when its postings in the window are not many more than
   * the candidates, is instead walked once through the window, adding to each candidate (a
   * bit test a posting, against a galloping search a candidate): at 1M entries, over the
   * bench's 202 queries, p95 3.8 → 3.2 ms and p99 5.5 → 4.2 ms in process, p50 unchanged; the
   * same walk for every such list lost (a pass over the candidates per list).
   */
  search(terms: readonly string[], n: number, alive: Uint8Array, accept: (slot: number) => boolean, weights?: ReadonlyMap<string, number>, space?: number): { slot: number; score: number }[] {
    // `space`: the namespace number every slot `accept` lets through is of, whose statistics score.
    const stats = this.statsOf(space);
    const average = stats.average;
    const lengths = this.lengths;
    const { base, perLength } = lengthNorm(average);
    // Weakest first: lists[0 .. essential) are the non-essential ones. A term no live document
    // of the namespace holds adds to no slot it may return.
    const lists: ScoredList[] = terms
      .map((term) => ({ p: this.list(term), scale: weights?.get(term) ?? 1, df: stats.df(term) }))
      .filter((t): t is { p: PostingList; scale: number; df: number } => t.p !== undefined && t.p.count > 0 && t.df > 0)
      .map(({ p, scale, df }) => {
        const weight = scale * idf(df, Math.max(stats.docs, df));
        // The list's maximum is over every namespace's postings: still a bound for this one's.
        return { p, weight, bound: weight * (K1 + 1), max: weight * this.maxOf(p, average) };
      })
      .sort((a, b) => a.bound - b.bound);
    const k = lists.length;
    if (k === 0 || n <= 0) return [];
    // upTo[i]: the most lists[0..i] together can add to a slot, by BM25's limit (which lists
    // propose candidates) and by the lists' real maxima (which candidates are looked up further).
    // Splitting by the real maxima too was measured: more lists stop proposing, and looking a
    // candidate up in them costs more than the scans saved (202 queries at 1M: no faster).
    const upTo = new Float64Array(k);
    const maxUpTo = new Float64Array(k);
    for (let i = 0, sum = 0, most = 0; i < k; i++) {
      upTo[i] = sum += (lists[i] as ScoredList).bound;
      maxUpTo[i] = most += (lists[i] as ScoredList).max;
    }
    /** Each list's position: the first posting not yet passed. */
    const at = new Int32Array(k);
    const top = new TopK(n);
    let bar = top.bar;
    let essential = 0;
    const local = this.window;
    const touched = this.touched;
    for (;;) {
      while (essential < k && (upTo[essential] as number) < bar) essential++;
      // The window begins at the lowest slot an essential list still holds: gaps are skipped.
      let start = Infinity;
      for (let i = essential; i < k; i++) {
        const { data, count } = (lists[i] as ScoredList).p;
        if ((at[i] as number) < count) start = Math.min(start, data[(at[i] as number) * 2] as number);
      }
      if (start === Infinity) break;
      const end = start + WINDOW;
      let first = WINDOW_WORDS;
      let last = -1;
      let proposed = 0;
      for (let i = essential; i < k; i++) {
        const { p, weight } = lists[i] as ScoredList;
        const { data, count } = p;
        const gain = weight * (K1 + 1);
        let j = at[i] as number;
        for (; j < count; j++) {
          const slot = data[j * 2] as number;
          if (slot >= end) break;
          if (alive[slot] !== 1) continue;
          const o = slot - start;
          local[o]! += postingScore(gain, data[j * 2 + 1] as number, lengths[slot] as number, base, perLength);
          const w = o >>> 5;
          touched[w]! |= 1 << (o & 31);
          if (w < first) first = w;
          if (w > last) last = w;
        }
        proposed += j - (at[i] as number);
        at[i] = j;
      }
      // The strongest non-essential list adds to every candidate of the window in one walk over
      // its postings there, when they are at most WALKED_PER_PROPOSED times the postings
      // proposed (each candidate would otherwise search it): see `search`.
      let looked = essential;
      if (essential > 0) {
        const { p, weight } = lists[essential - 1] as ScoredList;
        const { data, count } = p;
        const from = seek(data, count, at[essential - 1] as number, start);
        const to = seek(data, count, from, end);
        if (to - from <= proposed * WALKED_PER_PROPOSED) {
          const gain = weight * (K1 + 1);
          for (let j = from; j < to; j++) {
            const slot = data[j * 2] as number;
            const o = slot - start;
            if (((touched[o >>> 5] as number) & (1 << (o & 31))) !== 0) local[o]! += postingScore(gain, data[j * 2 + 1] as number, lengths[slot] as number, base, perLength);
          }
          at[essential - 1] = to;
          looked = essential - 1;
        }
      }
      for (let w = first; w <= last; w++) {
        let bits = touched[w] as number;
        touched[w] = 0;
        while (bits !== 0) {
          const low = bits & -bits;
          bits ^= low;
          const o = (w << 5) + 31 - Math.clz32(low);
          const slot = start + o;
          let score = local[o] as number;
          local[o] = 0;
          // The other non-essential lists, strongest first, while the slot could still pass the bar.
          let i = looked - 1;
          for (; i >= 0 && score + (maxUpTo[i] as number) >= bar; i--) {
            const { p, weight } = lists[i] as ScoredList;
            const j = seek(p.data, p.count, at[i] as number, slot);
            at[i] = j;
            if (j < p.count && p.data[j * 2] === slot) score += postingScore(weight * (K1 + 1), p.data[j * 2 + 1] as number, lengths[slot] as number, base, perLength);
          }
          if (i >= 0 || !(score > bar) || !accept(slot)) continue;
          top.push(slot, score);
          bar = top.bar;
        }
      }
    }
    return top.sorted();
  }

  /**
   * The most one posting of `p` scores per unit of idf, at the current average length or a
   * little above. BM25's own limit, K1 + 1, is about twice what a word found once in a
   * document of average length scores. Found in one pass over the list, kept up to date by
   * `add`, and found again only once the average has grown past the one it was found at.
   */
  private maxOf(p: PostingList, average: number): number {
    if (p.maxAt >= average) return p.max;
    const at = average * MAX_HEADROOM;
    const { data, count } = p;
    const lengths = this.lengths;
    let max = 0;
    const { base, perLength } = lengthNorm(at);
    for (let j = 0; j < count * 2; j += 2) max = Math.max(max, postingScore(K1 + 1, data[j + 1] as number, lengths[data[j] as number] as number, base, perLength));
    p.max = max * ROUNDING;
    p.maxAt = at;
    return p.max;
  }

  /**
   * Drops postings of dead slots and renumbers them by `remap` (old slot → new, -1 = gone). The
   * lengths move now; each list is renumbered in place when next read (a search, a write, a
   * save) or by a sweep over the rest in slices of SWEEP_SLICE_MS between requests, so the
   * caller's pause is not the postings' size (at 1M entries they took 163 ms of a 224 ms
   * renumbering). A list's maximum stays an upper bound (its postings only went). A restored
   * list not read yet is renumbered where it lies in the saved block, which its view keeps.
   */
  compact(remap: Int32Array, slotCount: number): void {
    this.finishRenumbering();
    this.generation += 1;
    this.renumbering = { remap, terms: this.postings.keys() };
    const lengths = this.lengths;
    // Slots only move down; a slot past the lengths' end (none is, every live slot was added) would leave a zero.
    const spaces = this.spaces;
    for (let old = 0; old < remap.length; old++) {
      const to = remap[old] as number;
      if (to < 0) continue;
      lengths[to] = old < lengths.length ? (lengths[old] as number) : 0;
      spaces[to] = old < spaces.length ? (spaces[old] as number) : DEAD_SPACE;
    }
    lengths.fill(0, slotCount);
    spaces.fill(DEAD_SPACE, slotCount);
    void this.sweep(this.renumbering);
  }

  /** Renumber the lists no read has reached, in slices between requests, from the next turn on. */
  private async sweep(renumbering: NonNullable<TextIndex['renumbering']>): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    const pause = slicer(SWEEP_SLICE_MS);
    for (const term of renumbering.terms) {
      // A later compaction finished this one first.
      if (this.renumbering !== renumbering) return;
      const held = this.postings.get(term);
      if (held !== undefined) this.current(term, held);
      await pause();
    }
    if (this.renumbering === renumbering) this.renumbered();
  }

  /** Renumber every list a compaction's sweep has not reached yet (before the next compaction). */
  private finishRenumbering(): void {
    if (!this.renumbering) return;
    for (const [term, held] of this.postings) this.current(term, held);
    this.renumbered();
  }

  private renumbered(): void {
    this.renumbering = null;
    // Every restored list is a list of its own now: the block stays only while one views it.
    this.saved = null;
  }

  /** A term's postings in the current numbering (renumbered now if a compaction has not reached it); undefined if none are left. */
  private current(term: string, held: PostingList | number): PostingList | number | undefined {
    const renumbering = this.renumbering;
    if (!renumbering || (typeof held !== 'number' && held.generation === this.generation)) return held;
    // Numbered before this compaction: a list, or a restored one still in the saved block.
    const list = typeof held === 'number' ? PostingList.of(this.pairsOf(held)) : held;
    list.generation = this.generation;
    if (list.compact(renumbering.remap) === 0) {
      this.postings.delete(term);
      this.dfIn.delete(term);
      return undefined;
    }
    // Every posting left is live, as the list's count now says: its namespaces' counts too.
    if (this.dfIn.has(term)) this.recount(term, list.pairs);
    if (list !== held) this.postings.set(term, list);
    return list;
  }

  /** A term's postings as a list, made from the restored block on first read. */
  private list(term: string): PostingList | undefined {
    const stored = this.postings.get(term);
    const held = stored === undefined ? undefined : this.current(term, stored);
    if (typeof held !== 'number') return held;
    // A view: the block stays while any restored list is read from it, so a copy would only
    // add memory. A list that grows moves to an array of its own (PostingList.push).
    const list = PostingList.of(this.pairsOf(held));
    list.generation = this.generation;
    this.postings.set(term, list);
    return list;
  }

  /** The (slot, frequency) pairs held for a term, without making a list of a restored one. */
  private pairsOf(held: PostingList | number): Int32Array {
    if (typeof held !== 'number') return held.pairs;
    const [start, end] = this.savedRange(held);
    return (this.saved as PackedPostings).pairs.subarray(start, end);
  }

  /** A list's live documents; a restored list not read yet holds live ones only. */
  private liveOf(held: PostingList | number): number {
    if (typeof held !== 'number') return held.live;
    const [start, end] = this.savedRange(held);
    return (end - start) / 2;
  }

  private savedRange(i: number): [number, number] {
    const { ends } = this.saved as PackedPostings;
    return [i === 0 ? 0 : (ends[i - 1] as number), ends[i] as number];
  }

  private grow(min: number): void {
    let size = this.lengths.length;
    while (size < min) size *= 2;
    const lengths = new Float32Array(size);
    lengths.set(this.lengths);
    this.lengths = lengths;
    const spaces = new Uint16Array(size).fill(DEAD_SPACE);
    spaces.set(this.spaces);
    this.spaces = spaces;
  }
}

/** The first posting at or after `from` whose slot is at least `slot` (`count` when none): galloping, then binary search. */
function seek(data: Int32Array, count: number, from: number, slot: number): number {
  if (from >= count || (data[from * 2] as number) >= slot) return from;
  // data[lo] < slot throughout; hi is count or a posting at or past the slot.
  let lo = from;
  let step = 1;
  let hi = from + 1;
  while (hi < count && (data[hi * 2] as number) < slot) {
    lo = hi;
    step *= 2;
    hi = lo + step;
  }
  if (hi > count) hi = count;
  while (hi - lo > 1) {
    const mid = (lo + hi) >>> 1;
    if ((data[mid * 2] as number) < slot) lo = mid;
    else hi = mid;
  }
  return hi;
}
