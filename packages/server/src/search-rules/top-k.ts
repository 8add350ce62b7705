/**
 * The k highest-scoring items seen so far, in a binary min-heap: each candidate costs one
 * comparison with the current k-th best, so scanning many candidates stays linear.
 */
export class TopK {
  private readonly k: number;
  private readonly ids: number[] = [];
  private readonly scores: number[] = [];

  constructor(k: number) {
    this.k = Math.max(0, k);
  }

  get size(): number {
    return this.ids.length;
  }

  /** The lowest score held (the k-th best once full). */
  get min(): number {
    return this.scores[0] ?? -Infinity;
  }

  clear(): void {
    this.ids.length = 0;
    this.scores.length = 0;
  }

  /**
   * The score a candidate must beat to enter: -Infinity until k are held, then the k-th best.
   * A scan keeps it in a local and re-reads it after each push, so the common case (a
   * candidate below the bar) costs one comparison and no call.
   */
  get bar(): number {
    return this.ids.length < this.k ? -Infinity : (this.scores[0] as number);
  }

  /** Whether a candidate with this score would enter the top k (check before costly tests). */
  wouldTake(score: number): boolean {
    return this.ids.length < this.k || score > (this.scores[0] as number);
  }

  push(id: number, score: number): void {
    if (!this.wouldTake(score)) return;
    if (this.ids.length < this.k) {
      this.ids.push(id);
      this.scores.push(score);
      this.up(this.ids.length - 1);
    } else {
      this.ids[0] = id;
      this.scores[0] = score;
      this.down(0);
    }
  }

  /** Best first. */
  sorted(): { slot: number; score: number }[] {
    return this.ids.map((slot, i) => ({ slot, score: this.scores[i] as number })).sort((a, b) => b.score - a.score || a.slot - b.slot);
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if ((this.scores[parent] as number) <= (this.scores[i] as number)) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private down(i: number): void {
    const n = this.ids.length;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < n && (this.scores[l] as number) < (this.scores[m] as number)) m = l;
      if (r < n && (this.scores[r] as number) < (this.scores[m] as number)) m = r;
      if (m === i) return;
      this.swap(i, m);
      i = m;
    }
  }

  private swap(a: number, b: number): void {
    [this.ids[a], this.ids[b]] = [this.ids[b] as number, this.ids[a] as number];
    [this.scores[a], this.scores[b]] = [this.scores[b] as number, this.scores[a] as number];
  }
}
