import type { EntryValue } from '../domain/entry.ts';
import { clipWithEllipsis } from '../domain/clip-text.ts';
import { canonicalJson } from '../domain/content-hash.ts';
import { compareCodePoints } from '../domain/order.ts';

/**
 * Reading connector values defensively: an entry's value is whatever its writer sent, so a
 * digest must never throw on a missing or mistyped field, only skip it.
 */
export type Obj = Record<string, unknown>;

export const objOf = (value: EntryValue | unknown): Obj | null =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Obj) : null;

export const str = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

/**
 * How much of a writer's free text a digest quotes: a digest is sized for a prompt (and a
 * record) whatever its entries hold, so titles, names and labels are cut like notes are.
 */
export const TEXT_CHARS = { title: 200, name: 100, note: 500 } as const;

/** `text` cut to `max` characters, an ellipsis marking the cut. */
export const cut = (text: string, max: number): string => clipWithEllipsis(text, max);

/** A non-empty string field, cut to `max` characters (a title by default). */
export const clipped = (value: unknown, max: number = TEXT_CHARS.title): string | null => {
  const s = str(value);
  return s === null ? null : cut(s, max);
};

/** The string items of a list, at most `items` of them, each cut to a name's length. */
export const clippedStrings = (value: unknown, items: number): string[] => strings(value).slice(0, items).map((s) => cut(s, TEXT_CHARS.name));

/**
 * A value a digest passes on as it came (an author, a priority): kept when small, else cut to
 * a line of its text, so one writer's payload cannot swell a digest.
 */
export const small = (value: unknown, max: number = TEXT_CHARS.name): unknown => {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return cut(value, max);
  if (typeof value !== 'object') return value;
  const json = JSON.stringify(value);
  return json.length <= max ? value : cut(json, max);
};

export const num = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);

export const strings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((x): x is string => typeof x === 'string') : []);

export const objects = (value: unknown): Obj[] =>
  Array.isArray(value) ? value.filter((x): x is Obj => x !== null && typeof x === 'object' && !Array.isArray(x)) : [];

/** Milliseconds of an ISO instant, or null when it is not one. */
export const ms = (iso: unknown): number | null => {
  if (typeof iso !== 'string') return null;
  const t = Date.parse(iso);
  return Number.isNaN(t) ? null : t;
};

/**
 * Newest first by an ISO field; missing times sort last. It parses both times at every
 * comparison: for a list of any length use sortedByTimeDesc or newestByTime, which parse
 * each item's time once and give the same order.
 */
export const byTimeDesc = <T>(time: (item: T) => string | null) => (a: T, b: T): number =>
  (ms(time(b)) ?? Number.NEGATIVE_INFINITY) - (ms(time(a)) ?? Number.NEGATIVE_INFINITY);

/** An item's sort key for the newest-first orders: its time in ms, missing last. */
const timeKey = <T>(time: (item: T) => string | null, item: T): number => ms(time(item)) ?? Number.NEGATIVE_INFINITY;

/**
 * `items` newest first by an ISO field (a new array), as `[...items].sort(byTimeDesc(time))`
 * orders them (stable: items of the same time, or with none, keep their order), each time
 * parsed once.
 */
export const sortedByTimeDesc = <T>(items: readonly T[], time: (item: T) => string | null): T[] => {
  const rows = items.map((item, i) => ({ item, t: timeKey(time, item), i }));
  rows.sort((a, b) => (a.t === b.t ? a.i - b.i : b.t - a.t));
  return rows.map((r) => r.item);
};

/**
 * The `limit` newest of the items offered by an ISO field: the same items in the same order as
 * a stable sort of all of them by byTimeDesc, then the first `limit` (an item offered later
 * loses ties), chosen as they come: each time is parsed once and at most `limit` items are kept.
 */
export class NewestByTime<T> {
  private readonly keys: number[] = [];
  private readonly kept: T[] = [];
  private readonly time: (item: T) => string | null;
  private readonly limit: number;
  private readonly tie: ((a: T, b: T) => number) | undefined;

  /**
   * `tie`: how items of the same time are ordered (negative: `a` first), in place of the order
   * they were offered in. Roll-ups pass canonicalOrder: the paths they join come in the order
   * a worker set them, which a reload does not keep, so a tie must not depend on it.
   */
  constructor(time: (item: T) => string | null, limit: number, tie?: (a: T, b: T) => number) {
    this.time = time;
    this.limit = limit;
    this.tie = tie;
  }

  /** Whether `item` (at time `t`) goes before the kept item at index `i`. */
  private before(item: T, t: number, i: number): boolean {
    const k = this.keys[i] as number;
    if (t !== k) return t > k;
    return this.tie !== undefined && this.tie(item, this.kept[i] as T) < 0;
  }

  offer(item: T): void {
    const { keys, kept, limit } = this;
    if (limit <= 0) return;
    const t = timeKey(this.time, item);
    // Full, and not before the last kept: without `tie`, an item that comes later loses ties.
    if (kept.length === limit && !this.before(item, t, limit - 1)) return;
    // After every kept item it does not go before (without `tie`: every one at least as new).
    let lo = 0;
    let hi = kept.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (!this.before(item, t, mid)) lo = mid + 1;
      else hi = mid;
    }
    keys.splice(lo, 0, t);
    kept.splice(lo, 0, item);
    if (kept.length > limit) {
      keys.pop();
      kept.pop();
    }
  }

  items(): T[] {
    return [...this.kept];
  }
}

/** The `limit` newest of `items` by an ISO field: `sortedByTimeDesc(items, time).slice(0, limit)`, see NewestByTime. */
export const newestByTime = <T>(items: Iterable<T>, time: (item: T) => string | null, limit: number, tie?: (a: T, b: T) => number): T[] => {
  const newest = new NewestByTime(time, limit, tie);
  for (const item of items) newest.offer(item);
  return newest.items();
};

/**
 * A total order over the items a roll-up lists, for ties it must break the same way whatever
 * order its paths come in (a running worker joins them in the order it compiled them, a
 * reloaded one in record order): by entity path, then key (what almost every item carries and
 * what almost always tells two apart), then by the whole item's canonical JSON. Items it calls
 * equal read the same. The address first keeps it cheap: a roll-up of 16,000 paths whose items
 * share their times compares them often, and the JSON is made only for the rare items left tied.
 */
export const canonicalOrder = (a: unknown, b: unknown): number =>
  compareCodePoints(addressText(a, 'entity_path'), addressText(b, 'entity_path')) ||
  compareCodePoints(addressText(a, 'key'), addressText(b, 'key')) ||
  compareCodePoints(canonicalJson(a), canonicalJson(b));

/** An item's string field, or '' (items without one compare by their JSON alone). */
const addressText = (item: unknown, field: 'entity_path' | 'key'): string => {
  const value = objOf(item)?.[field];
  return typeof value === 'string' ? value : '';
};

/**
 * Whether `a` is the later of two items by an ISO time (missing: earliest), ties to the first
 * in canonicalOrder: which of equal-time items a merge keeps never depends on the order it met them.
 */
export const laterOf = <T>(a: T, b: T | null, time: (item: T) => string | null): boolean => {
  if (b === null) return true;
  const [x, y] = [ms(time(a)) ?? Number.NEGATIVE_INFINITY, ms(time(b)) ?? Number.NEGATIVE_INFINITY];
  return x !== y ? x > y : canonicalOrder(a, b) < 0;
};

/** A ratio rounded to four places, or null when there is nothing to divide. */
export const ratio = (part: number, whole: number): number | null => (whole > 0 ? Math.round((part / whole) * 10_000) / 10_000 : null);

export const mean = (total: number, count: number): number | null => (count > 0 ? Math.round(total / count) : null);

/** "1h 5m", "4m 10s", "12s": durations as people read them in a headline. */
export const humanDuration = (milliseconds: number | null): string => {
  if (milliseconds === null) return 'n/a';
  const s = Math.round(milliseconds / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  const h = Math.floor(m / 60);
  return h < 48 ? `${h}h ${m % 60}m` : `${Math.floor(h / 24)}d ${h % 24}h`;
};

export const percent = (value: number | null): string => (value === null ? 'n/a' : `${Math.round(value * 1000) / 10}%`);

/** Count occurrences, then the top `limit` as [name, count] by count then name. */
export const topCounts = (names: Iterable<string>, limit: number): Array<[string, number]> => {
  const counts = new Map<string, number>();
  for (const name of names) counts.set(name, (counts.get(name) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).slice(0, limit);
};

/** Short one-line text of a value, for recent-change summaries. */
export const shortText = (value: EntryValue, max = 120): string => {
  const o = objOf(value);
  const raw = o === null ? String(value) : (str(o.title) ?? str(o.summary) ?? str(o.text) ?? str(o.name) ?? str(o.status) ?? str(o.state) ?? JSON.stringify(o));
  const line = raw.replace(/\s+/g, ' ').trim();
  return clipWithEllipsis(line, max);
};
