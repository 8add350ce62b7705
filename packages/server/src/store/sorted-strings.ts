import { compareCodePoints } from '../domain/order.ts';

/** First index in `sorted` whose item is not below `item` (code point order). */
export const lowerBound = (sorted: readonly string[], item: string): number => {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareCodePoints(sorted[mid] as string, item) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
};

/** `a` and `b`, each in code point order, as one array in that order. */
const merge = (a: readonly string[], b: readonly string[]): string[] => {
  const out = new Array<string>(a.length + b.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length && j < b.length) out[k++] = compareCodePoints(a[i] as string, b[j] as string) <= 0 ? (a[i++] as string) : (b[j++] as string);
  while (i < a.length) out[k++] = a[i++] as string;
  while (j < b.length) out[k++] = b[j++] as string;
  return out;
};

/**
 * A set of distinct strings read in code point order (the entity paths of a namespace, the
 * keys of a path). Additions and removals wait aside and are applied when the order is next
 * read, so a burst of new keys, or a forget of a whole prefix, costs O(1) a change instead of
 * an O(n) splice of the sorted array each: with 50k keys under one path the splice was about
 * 6 µs of every write. The array `sorted()` returns is never changed afterwards, so a walk
 * that awaits between items keeps the order it started with.
 */
export class SortedStrings {
  private ordered: readonly string[];
  /**
   * Not in `ordered` yet; made when first needed. A store holds one of these per entity path
   * (its keys) and most are never changed after a start: two empty sets each were four objects
   * and about 250 bytes a path on the heap, which every full collection walks.
   */
  private added: Set<string> | null = null;
  /** Still in `ordered`, but gone; made when first needed. */
  private removed: Set<string> | null = null;
  /** Whether `ordered` is still in the order it was given (see `unsorted`). */
  private sortDue = false;

  /** `items` already in code point order (`of` sorts them). */
  constructor(items: readonly string[] = []) {
    this.ordered = items;
  }

  /** From strings in any order. */
  static of(items: Iterable<string>): SortedStrings {
    return new SortedStrings([...items].sort(compareCodePoints));
  }

  /**
   * From strings in any order, sorted when the order is first read: a store loads every entity
   * path's keys at start, and sorting them all then (a million keys, 0.3–0.5 s of a restart on
   * two busy cores) sorted many that no list ever reads.
   */
  static unsorted(items: Iterable<string>): SortedStrings {
    const set = new SortedStrings([...items]);
    set.sortDue = true;
    return set;
  }

  /** Add `item`, which must not be in the set. */
  add(item: string): void {
    if (!this.removed?.delete(item)) (this.added ??= new Set()).add(item);
  }

  /** Remove `item`, which must be in the set. */
  remove(item: string): void {
    if (!this.added?.delete(item)) (this.removed ??= new Set()).add(item);
  }

  sorted(): readonly string[] {
    if (this.sortDue) {
      // No caller has seen the array yet: sorted in place.
      (this.ordered as string[]).sort(compareCodePoints);
      this.sortDue = false;
    }
    const { added, removed } = this;
    if (added?.size || removed?.size) {
      const kept = removed?.size ? this.ordered.filter((item) => !removed.has(item)) : this.ordered;
      this.ordered = merge(kept, added ? [...added].sort(compareCodePoints) : []);
      this.added = null;
      this.removed = null;
    }
    return this.ordered;
  }
}
