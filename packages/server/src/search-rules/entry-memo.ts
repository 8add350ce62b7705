import type { Entry } from '../domain/entry.ts';

/**
 * What a search works out from an entry (its analysed fields, its embedding text), kept from
 * search to search: the same entries come back query after query. Entries are immutable (a
 * new version is a new object), so a result never goes stale; they are weakly held, so a
 * replaced entry leaves with what was worked out from it; and the memo starts afresh once
 * it holds `maxChars` characters of text, so it stays a few megabytes.
 */
export const entryMemo = <T>(compute: (entry: Entry) => T, charsOf: (value: T) => number, maxChars = 4_000_000): ((entry: Entry) => T) => {
  let kept = new WeakMap<Entry, T>();
  let keptChars = 0;
  return (entry) => {
    const known = kept.get(entry);
    if (known !== undefined) return known;
    const value = compute(entry);
    const chars = charsOf(value);
    if (keptChars + chars > maxChars) {
      kept = new WeakMap();
      keptChars = 0;
    }
    kept.set(entry, value);
    keptChars += chars;
    return value;
  };
};
