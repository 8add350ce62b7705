import { TopK } from '../search-rules/top-k.ts';
import type { CoarseQuantizer } from './coarse-quantizer.ts';
import { grownCapacity } from './capacity.ts';
import { CodeScanner } from './code-scanner.ts';
import { IvfLists, TRAIN_AT, type VectorRows } from './ivf-lists.ts';
import type { VectorList } from './vector-list.ts';
import { VectorSlab } from './vector-slab.ts';

/**
 * Vectors a listed search scans at least (more when filters reject many). Measured on the
 * bench corpus (built-in embedder, 200 queries, 50 candidates each, against an exact scan): of
 * the exact 10 nearest, 12,000 found 83 % at 100k entries and 49 % at 1M; 24,000 finds 91 % and
 * 56 %, for about 0.25 ms more per search at 1M (vector p50 0.78 → 1.05 ms); 48,000, 95 % at
 * 100k for 0.7 ms more there.
 */
const SCAN_AT_LEAST = 24_000;
/** Candidates beyond the `n` asked for that the exact vectors rank (at least twice `n`). */
const RERANK_EXTRA = 16;
/** Rows given a vector that a scoped search counts at once; past this many uncounted, every row is counted again. */
const COUNT_AT_MOST = 65_536;
/** Stamps the lists a search's first pass read, so the wide pass skips them (VectorList.mark). */
let searches = 0;

/**
 * The namespace a search is confined to: every slot's namespace number (slot-table.ts
 * `namespaceNumbers`, a view read at search time) and the searched one's. Vectors are counted
 * per namespace from it, so that a namespace much smaller than the index is searched apart.
 */
export interface SearchScope {
  spaces: Uint16Array;
  code: number;
}

/**
 * Unit vectors in one flat block of floats (vector-slab.ts), searched by cosine
 * similarity (a dot product of normalized vectors). Up to 20k vectors the scan is exact: int8
 * codes of the vectors, dotted in WebAssembly SIMD (dot-kernel.ts), choose the rows that can
 * be among the best and their floats rank them; above, an inverted file
 * (ivf-lists.ts) limits it to the lists nearest the query, so a search costs about the same
 * at a million entries as at twenty thousand, at the price of sometimes missing a neighbour
 * filed under a farther list. One index holds one embedder's vectors: dimensions never mix.
 */
export class VectorIndex {
  readonly dimension: number;
  readonly embedderId: string;
  private slab: VectorSlab;
  /**
   * Where each slot's vector lies in the slab (-1: the slot holds none), and which slot each
   * row holds (-1: free). A vector keeps its row for as long as it lives: renumbering the slots rewrites these
   * numbers, where moving every vector to its new slot's place took half the renumbering's
   * pause at a million entries (400 MB moved). Freed rows are taken again by new vectors.
   */
  private rowOf: Int32Array;
  private slotOfRow: Int32Array;
  /** Rows in use or freed: the slab's rows below this have held a vector. */
  private rowCount = 0;
  private freeRows: number[] = [];
  /**
   * Per row, the namespace number of its vector's entry, as a scoped search last counted it
   * (-1: free, or not counted yet). A slot keeps its namespace for as long as it holds a
   * vector (a renumbering moves the slot, not the row), so a row is counted once.
   */
  private spaceOfRow: Int32Array;
  /** Vectors counted per namespace number, and the rows they lie within ([lowest, one past the highest], never narrowed but by a recount). */
  private inSpace: number[] = [];
  private spanOf: Array<[number, number]> = [];
  /** Rows given a vector since the last count; null: count every row again (after a restore, or too many). */
  private uncounted: number[] | null = [];
  private readonly rows: VectorRows = { rowOf: () => this.rowOf, data: () => this.slab.data };
  private readonly ivf = new IvfLists();
  /** Scans the lists' codes in WebAssembly SIMD; null where that cannot be had (JS scans). */
  private readonly scanner: CodeScanner | null;
  /**
   * The exact scan's int8 codes of every row, by row, while the index is not listed (see
   * `search`); null once it is (the lists hold codes of their own), where WebAssembly SIMD
   * cannot be had, or after a restore too large to scan exactly for long.
   */
  private held: CodeScanner | null;
  size = 0;

  constructor(embedderId: string, dimension: number, capacity = 1024) {
    this.embedderId = embedderId;
    this.dimension = dimension;
    this.slab = new VectorSlab(dimension, capacity);
    this.rowOf = new Int32Array(capacity).fill(-1);
    this.slotOfRow = new Int32Array(capacity).fill(-1);
    this.spaceOfRow = new Int32Array(capacity).fill(-1);
    this.scanner = CodeScanner.for(dimension);
    this.held = CodeScanner.for(dimension);
  }

  /** Whether searches go through the inverted lists (trained) rather than an exact scan. */
  get listed(): boolean {
    return this.ivf.ready;
  }

  get bytes(): number {
    return this.slab.bytes + this.rowOf.byteLength + this.slotOfRow.byteLength + this.spaceOfRow.byteLength + (this.held?.bytes ?? 0);
  }

  set(slot: number, vector: Float32Array): void {
    if (vector.length !== this.dimension) throw new Error(`vector has ${vector.length} dimensions, the index ${this.dimension}`);
    if (slot >= this.rowOf.length) this.growSlots(slot + 1);
    let norm = 0;
    for (let d = 0; d < vector.length; d++) norm += (vector[d] as number) ** 2;
    const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
    const added = !this.holds(slot);
    if (added) this.takeRow(slot);
    const base = (this.rowOf[slot] as number) * this.dimension;
    const data = this.slab.data;
    for (let d = 0; d < vector.length; d++) data[base + d] = (vector[d] as number) * scale;
    this.heldCodes()?.hold(this.rowOf[slot] as number, data, base);
    if (added) {
      this.size += 1;
      this.ivf.add(slot, data, base, this.size, this.rows, this.dimension);
    }
  }

  /** Whether a slot holds a vector (no view made, unlike `vectorOf`). */
  holds(slot: number): boolean {
    return (this.rowOf[slot] ?? -1) >= 0;
  }

  /** The stored (normalized) vector of a slot, a view valid until the next `set`; null when it has none. */
  vectorOf(slot: number): Float32Array | null {
    if (!this.holds(slot)) return null;
    const base = (this.rowOf[slot] as number) * this.dimension;
    return this.slab.data.subarray(base, base + this.dimension);
  }

  /** The inverted file's quantizer and lists, for saving; null before training. */
  filing(): ReturnType<IvfLists['saved']> {
    return this.ivf.saved();
  }

  /**
   * Take saved vectors (an empty index only): `data` holds `dimension` per slot, `has` says
   * which, and rows after those are room for new vectors; with `filing`, the inverted lists as
   * saved, else they are trained anew.
   */
  restore(data: Float32Array, has: Uint8Array, filing: { quantizer: CoarseQuantizer; lists: VectorList[] } | null = null): void {
    // Listed vectors are scanned through the lists, never exactly: adopted as they are, not
    // copied (a million are 400 MB). Unlisted ones go where the exact scan's kernel reads them.
    if (filing && has.length >= 1024) this.slab = VectorSlab.adopt(this.dimension, data);
    else {
      this.slab = new VectorSlab(this.dimension, Math.max(1024, has.length));
      this.slab.data.set(data.subarray(0, has.length * this.dimension));
    }
    // Saved by slot: each vector's row is its slot; the rows of slots without one are free.
    this.rowOf = new Int32Array(Math.max(1024, has.length)).fill(-1);
    this.slotOfRow = new Int32Array(this.slab.data.length / this.dimension).fill(-1);
    this.spaceOfRow = new Int32Array(this.slotOfRow.length).fill(-1);
    this.uncounted = null;
    this.freeRows = [];
    this.rowCount = has.length;
    for (let slot = has.length - 1; slot >= 0; slot--) {
      if (has[slot] === 1) {
        this.rowOf[slot] = slot;
        this.slotOfRow[slot] = slot;
      } else this.freeRows.push(slot);
    }
    this.size = has.reduce((n, h) => n + h, 0);
    // Codes for the exact scan only where it will serve: not under saved lists, nor for the
    // moment a large index without them is being listed.
    this.held = filing || this.size >= TRAIN_AT ? null : CodeScanner.for(this.dimension);
    const held = this.held;
    if (held) for (let row = 0; row < this.rowCount; row++) if ((this.slotOfRow[row] as number) >= 0) held.hold(row, this.slab.data, row * this.dimension);
    if (filing) this.ivf.restore(filing.quantizer, filing.lists, this.rows, this.dimension, this.size);
    else this.ivf.trainIfGrown(this.size, this.rows, this.dimension);
  }

  /** The exact scan's codes, let go once the lists answer (they are never unlisted again). */
  private heldCodes(): CodeScanner | null {
    if (this.held && this.ivf.ready) this.held = null;
    return this.held;
  }

  /**
   * The exact scan's candidates, chosen by the held codes, in slot order; null when the codes
   * cannot narrow them down. A row's dot from its codes is within `errorBound` of its float
   * one, so a row whose code dot is more than twice that below the n-th best code dot cannot be
   * among the n best: every row above it is a candidate, and ranking the candidates by their
   * floats (in slot order, so that on equal scores the lower slot stays, as in the float scan)
   * answers exactly what the float scan answers. At 10k vectors and n = 50 (the bench), about
   * 120 candidates a search. Vectors so alike that the codes cannot tell many of them apart
   * (texts of a small vocabulary, near copies) give more: up to an eighth of the rows are still
   * ranked by their floats, which costs about what the float scan of every row would (ranking
   * one candidate about 0.48 µs, scanning one row about 67 ns, at 10k rows of 100 dimensions;
   * both grow with the dimension). Past that the float scan answers instead. Memories written
   * like the MCP peer bench's (7 words of a 70-word vocabulary) chose 190–930 candidates of
   * 10k, median 307: with the bound at 200 three searches in four fell back to the float scan.
   */
  private nearByCodes(held: CodeScanner, q: Float32Array, n: number, alive: Uint8Array, accept: (slot: number) => boolean): number[] | null {
    const rows = this.rowCount;
    const slotOfRow = this.slotOfRow;
    held.use(q);
    const sums = held.scanHeld(rows);
    const scales = held.scales;
    const unit = held.unit;
    const margin = (2 * held.errorBound(q)) / unit;
    // One pass: the n best code dots so far set a bar that only rises, so a row more than the
    // margin below it when read can never be a candidate; those within it are kept, and the
    // final bar's floor sorts them out afterwards.
    const rough = new TopK(n);
    let bar = rough.bar / unit;
    const near: number[] = [];
    const nearSums: number[] = [];
    for (let row = 0; row < rows; row++) {
      const scaled = (sums[row] as number) * (scales[row] as number);
      if (!(scaled >= bar - margin)) continue;
      const slot = slotOfRow[row] as number;
      if (slot < 0 || alive[slot] !== 1 || !accept(slot)) continue;
      near.push(slot);
      nearSums.push(scaled);
      if (scaled > bar) {
        rough.push(slot, scaled * unit);
        bar = rough.bar / unit;
      }
    }
    // Fewer than n accepted: every one of them was kept (the bar never rose).
    if (rough.size < n) return near.sort((a, b) => a - b);
    const floor = bar - margin;
    const most = Math.max(4 * n, n + 8 * RERANK_EXTRA, Math.trunc(rows / 8));
    const chosen = near.filter((_, i) => (nearSums[i] as number) >= floor);
    if (chosen.length > most) return null;
    return chosen.sort((a, b) => a - b);
  }

  /**
   * Count the rows given a vector since the last count by their slot's namespace (`spaces`),
   * or every row again after a restore or after many writes without a scoped search.
   */
  private countSpaces(spaces: Uint16Array): void {
    const { slotOfRow, spaceOfRow, inSpace, spanOf } = this;
    const count = (row: number): void => {
      const slot = slotOfRow[row] as number;
      if (slot < 0 || (spaceOfRow[row] as number) >= 0) return;
      const code = spaces[slot] ?? 0;
      spaceOfRow[row] = code;
      inSpace[code] = (inSpace[code] ?? 0) + 1;
      const span = spanOf[code];
      if (span === undefined) spanOf[code] = [row, row + 1];
      else {
        if (row < span[0]) span[0] = row;
        if (row >= span[1]) span[1] = row + 1;
      }
    };
    if (this.uncounted === null) {
      spaceOfRow.fill(-1);
      inSpace.length = 0;
      spanOf.length = 0;
      for (let row = 0; row < this.rowCount; row++) count(row);
      this.uncounted = [];
      return;
    }
    for (const row of this.uncounted) count(row);
    this.uncounted.length = 0;
  }

  /**
   * The candidates of an exact scan of namespace `code`'s rows alone (see `search`): their
   * float dot products (in WebAssembly over each run of consecutive rows, where the slab has
   * the kernel) choose a few more than asked for, which `rankExactly` then ranks. Without the
   * kernel, every row of the namespace is a candidate.
   */
  private nearInSpace(q: Float32Array, n: number, alive: Uint8Array, accept: (slot: number) => boolean, code: number): number[] {
    const [from, to] = this.spanOf[code] ?? [0, 0];
    const { spaceOfRow, slotOfRow } = this;
    const dots = this.slab.dotsWhere(q, spaceOfRow, code, from, to);
    const near: number[] = [];
    if (!dots) {
      for (let row = from; row < to; row++) {
        const slot = slotOfRow[row] as number;
        if (spaceOfRow[row] === code && slot >= 0 && alive[slot] === 1) near.push(slot);
      }
      return near;
    }
    const rough = new TopK(Math.max(2 * n, n + RERANK_EXTRA));
    let bar = rough.bar;
    for (let row = from; row < to; row++) {
      if (spaceOfRow[row] !== code) continue;
      const dot = dots[row - from] as number;
      if (!(dot > bar)) continue;
      const slot = slotOfRow[row] as number;
      if (slot < 0 || alive[slot] !== 1 || !accept(slot)) continue;
      rough.push(slot, dot);
      bar = rough.bar;
    }
    for (const { slot } of rough.sorted()) near.push(slot);
    return near;
  }

  delete(slot: number): void {
    if (!this.holds(slot)) return;
    this.size -= 1;
    this.freeRow(slot);
  }

  /**
   * The `n` nearest live vectors that `accept` takes. With `scope` (the namespace `accept`
   * confines the search to) and the lists answering: a namespace of fewer than TRAIN_AT
   * vectors is scanned exactly, its rows alone; a larger one that is not the whole index
   * scans the lists nearest first until it has read SCAN_AT_LEAST of its own vectors (or
   * half of them, if fewer), every list if need be. Without it, the lists nearest the query
   * are scanned, whatever namespace their vectors are in.
   */
  search(query: Float32Array, n: number, alive: Uint8Array, accept: (slot: number) => boolean, scope?: SearchScope): { slot: number; score: number }[] {
    const dim = this.dimension;
    // A query of another length (the model changed dimension under the same name) has no
    // similarity with these vectors: nothing rather than nonsense from its first components.
    if (query.length !== dim) return [];
    const q = new Float32Array(dim);
    let norm = 0;
    for (let d = 0; d < dim; d++) norm += (query[d] as number) ** 2;
    if (norm === 0) return [];
    for (let d = 0; d < dim; d++) q[d] = (query[d] as number) / Math.sqrt(norm);
    const top = new TopK(n);
    const rowOf = this.rowOf;
    const consider = (slots: Iterable<number>): { slot: number; score: number }[] => {
      this.rankExactly(slots, q, top, alive, accept);
      return top.sorted();
    };
    if (this.ivf.ready) {
      // Lists are trained over every namespace: the nearest ones hold mostly other namespaces'
      // vectors when the searched one is small (a team's in a store of many), which the filter
      // then drops, and its own nearest vectors were never read. (2k entries in a store of 45k:
      // 5 answers in 100 changed when 43k were written to another namespace.)
      let own: Uint16Array | null = null;
      let code = 0;
      let enough = SCAN_AT_LEAST;
      if (scope) {
        this.countSpaces(scope.spaces);
        const mine = this.inSpace[scope.code] ?? 0;
        if (mine < TRAIN_AT) return consider(this.nearInSpace(q, n, alive, accept, scope.code));
        // The whole index is this namespace's: the lists as they are, nothing counted.
        if (mine < this.size) {
          own = scope.spaces;
          code = scope.code;
          enough = Math.min(SCAN_AT_LEAST, Math.ceil(mine / 2));
        }
      }
      // The lists' int8 codes choose candidates; a few more than asked for are then ranked by
      // their exact vectors, so quantization moves no result that the floats would keep.
      const rough = new TopK(Math.max(2 * n, n + RERANK_EXTRA));
      const scanner = this.scanner;
      scanner?.use(q);
      // Vectors read (of the searched namespace, when it is not the whole index).
      let scanned = 0;
      const mark = ++searches;
      for (const wide of [false, true]) {
        // The nearest cells first; only when filters leave too few, or the namespace's own
        // vectors read are too few, every list (wide), nearest first, those read skipped.
        for (const list of this.ivf.order(q, wide)) {
          if (!wide) list.mark = mark;
          else if (list.mark === mark) continue;
          const { slots, codes, scales, count } = list;
          // A row's dot product is sum × scale × unit: the kernel's sums (in units of the
          // integer query) meet the bar in those units, so only the rows kept are multiplied
          // out. Without the kernel, JS sums in floats (unit 1).
          const sums = scanner?.scan(codes, count);
          const unit = scanner ? scanner.unit : 1;
          let bar = rough.bar / unit;
          for (let j = 0; j < count; j++) {
            let sum = 0;
            if (sums) sum = sums[j] as number;
            else for (let d = 0, base = j * dim; d < dim; d++) sum += (codes[base + d] as number) * (q[d] as number);
            const scaled = sum * (scales[j] as number);
            if (!(scaled > bar)) continue;
            const slot = slots[j] as number;
            if (!((rowOf[slot] as number) >= 0) || alive[slot] !== 1 || !accept(slot)) continue;
            rough.push(slot, scaled * unit);
            bar = rough.bar / unit;
          }
          if (own) {
            // Dead slots still filed count too: a bound, read in slot order.
            for (let j = 0; j < count; j++) if (own[slots[j] as number] === code) scanned += 1;
          } else scanned += count;
          if (scanned >= enough && rough.size >= n) break;
        }
        if (rough.size >= n && scanned >= enough) break;
      }
      return consider(rough.sorted().map(({ slot }) => slot));
    }
    const rows = this.rowCount;
    const slotOfRow = this.slotOfRow;
    const held = this.heldCodes();
    const near = held ? this.nearByCodes(held, q, n, alive, accept) : null;
    if (near) return consider(near);
    const dots = this.slab.dotsWith(q, rows);
    if (!dots) return consider(slotOfRow.subarray(0, rows).filter((slot) => slot >= 0 && slot < alive.length));
    // The kernel's float32 sums choose a few more than asked for; `consider` ranks those by
    // the same double-precision sums as ever, so the answer is what the JS scan answered.
    const rough = new TopK(Math.max(2 * n, n + RERANK_EXTRA));
    // The score is the surest test: most rows fall below the bar and are never looked up.
    let bar = rough.bar;
    for (let row = 0; row < rows; row++) {
      const dot = dots[row] as number;
      if (!(dot > bar)) continue;
      const slot = slotOfRow[row] as number;
      if (slot < 0 || alive[slot] !== 1 || !accept(slot)) continue;
      rough.push(slot, dot);
      bar = rough.bar;
    }
    return consider(rough.sorted().map(({ slot }) => slot));
  }

  /**
   * Pushes each of `slots` (live ones; in the order given, which decides ties) into `top` by
   * its exact dot product with `q`: a double-precision sum of the float components, in
   * component order. Four rows are summed at a time: four independent sums overlap where one
   * waits on each addition, and each still adds its terms in the same order, so every score is
   * the same to the bit. 100 rows of 100 dimensions, scattered: 65 → 17 µs in cache, 72 → 44
   * µs out of it.
   */
  private rankExactly(slots: Iterable<number>, q: Float32Array, top: TopK, alive: Uint8Array, accept: (slot: number) => boolean): void {
    const dim = this.dimension;
    const data = this.slab.data;
    const rowOf = this.rowOf;
    const live: number[] = [];
    for (const slot of slots) if ((rowOf[slot] ?? -1) >= 0 && alive[slot] === 1) live.push(slot);
    const dots = new Float64Array(live.length);
    let j = 0;
    for (; j + 4 <= live.length; j += 4) {
      const b0 = (rowOf[live[j] as number] as number) * dim;
      const b1 = (rowOf[live[j + 1] as number] as number) * dim;
      const b2 = (rowOf[live[j + 2] as number] as number) * dim;
      const b3 = (rowOf[live[j + 3] as number] as number) * dim;
      let s0 = 0;
      let s1 = 0;
      let s2 = 0;
      let s3 = 0;
      for (let d = 0; d < dim; d++) {
        const x = q[d] as number;
        s0 += (data[b0 + d] as number) * x;
        s1 += (data[b1 + d] as number) * x;
        s2 += (data[b2 + d] as number) * x;
        s3 += (data[b3 + d] as number) * x;
      }
      dots[j] = s0;
      dots[j + 1] = s1;
      dots[j + 2] = s2;
      dots[j + 3] = s3;
    }
    for (; j < live.length; j++) {
      const base = (rowOf[live[j] as number] as number) * dim;
      let dot = 0;
      for (let d = 0; d < dim; d++) dot += (data[base + d] as number) * (q[d] as number);
      dots[j] = dot;
    }
    live.forEach((slot, i) => {
      const dot = dots[i] as number;
      if (top.wouldTake(dot) && accept(slot)) top.push(slot, dot);
    });
  }

  /**
   * Renumber by `remap` (old slot → new, -1 = gone) in place: each vector keeps its row, only
   * the numbers that lead to it change; a slot gone with its vector still held frees its row.
   */
  compact(remap: Int32Array, slotCount: number): void {
    const { rowOf, slotOfRow } = this;
    // Slots only move down: a slot's row is read before anything is written over it. Every
    // number below `slotCount` is some kept slot's new one, so each is written once.
    for (let old = 0; old < remap.length; old++) {
      const to = remap[old] as number;
      const row = rowOf[old] ?? -1;
      if (to < 0) {
        if (row >= 0) this.delete(old);
        continue;
      }
      if (to >= rowOf.length) continue;
      rowOf[to] = row;
      if (row >= 0) slotOfRow[row] = to;
    }
    rowOf.fill(-1, slotCount);
    this.ivf.remap(remap);
  }

  /** Give `slot` a row: a freed one, else the next, growing the slab for it. */
  private takeRow(slot: number): void {
    let row = this.freeRows.pop();
    if (row === undefined) {
      row = this.rowCount++;
      if (row >= this.slotOfRow.length) this.growRows(row + 1);
    }
    this.rowOf[slot] = row;
    this.slotOfRow[row] = slot;
    const uncounted = this.uncounted;
    if (uncounted && uncounted.length >= Math.max(COUNT_AT_MOST, this.rowCount >> 3)) this.uncounted = null;
    else uncounted?.push(row);
  }

  private freeRow(slot: number): void {
    const row = this.rowOf[slot] as number;
    if (row < 0) return;
    this.rowOf[slot] = -1;
    this.slotOfRow[row] = -1;
    const code = this.spaceOfRow[row] as number;
    if (code >= 0) {
      this.inSpace[code] = (this.inSpace[code] as number) - 1;
      this.spaceOfRow[row] = -1;
    }
    this.freeRows.push(row);
  }

  private growSlots(min: number): void {
    const capacity = grownCapacity(this.rowOf.length, min);
    const rowOf = new Int32Array(capacity).fill(-1);
    rowOf.set(this.rowOf);
    this.rowOf = rowOf;
  }

  private growRows(min: number): void {
    const capacity = grownCapacity(this.slotOfRow.length, min);
    this.slab.grow(capacity);
    const slotOfRow = new Int32Array(capacity).fill(-1);
    slotOfRow.set(this.slotOfRow);
    this.slotOfRow = slotOfRow;
    const spaceOfRow = new Int32Array(capacity).fill(-1);
    spaceOfRow.set(this.spaceOfRow);
    this.spaceOfRow = spaceOfRow;
  }
}
