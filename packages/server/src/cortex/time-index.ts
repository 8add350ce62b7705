/**
 * Items sorted by a time read once (epoch ms), items of the same time kept in the order they
 * came (as a stable sort leaves them): trace rules find "the latest before" and "the first
 * after" an instant by binary search instead of filtering and sorting every candidate again
 * for each incident or CI run.
 */
export class TimeIndex<T> {
  readonly times: number[] = [];
  readonly items: T[] = [];

  /** `time`: an item's instant, or null to leave the item out. */
  constructor(items: Iterable<T>, time: (item: T) => number | null) {
    const rows: Array<{ t: number; item: T }> = [];
    for (const item of items) {
      const t = time(item);
      if (t !== null) rows.push({ t, item });
    }
    rows.sort((a, b) => a.t - b.t);
    for (const { t, item } of rows) {
      this.times.push(t);
      this.items.push(item);
    }
  }

  get length(): number {
    return this.times.length;
  }

  /** Position of the first item at or after `t` (length when there is none). */
  firstAtOrAfter(t: number): number {
    let lo = 0;
    let hi = this.times.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.times[mid] as number) < t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Position of the first item after `t` (length when there is none). */
  firstAfter(t: number): number {
    let lo = 0;
    let hi = this.times.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.times[mid] as number) <= t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Position of the latest item at or before `t` (the first that came among those of its time), or -1. */
  latestAtOrBefore(t: number): number {
    const last = this.firstAfter(t) - 1;
    return last < 0 ? -1 : this.firstAtOrAfter(this.times[last] as number);
  }
}
