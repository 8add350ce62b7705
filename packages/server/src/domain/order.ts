/**
 * Compare strings by Unicode code point, the order PostgreSQL's `COLLATE "C"` gives on UTF-8.
 * JavaScript's `<` compares UTF-16 code units, which puts U+10000 and above (surrogate pairs)
 * before U+E000–U+FFFF; every backend must agree on one order for cursors to work.
 */
export const compareCodePoints = (a: string, b: string): number => {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const xSurrogate = x >= 0xd800 && x <= 0xdfff;
    const ySurrogate = y >= 0xd800 && y <= 0xdfff;
    if (xSurrogate !== ySurrogate) return xSurrogate ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
};

/** Order of entries in lists: entity_path, then key. */
export const comparePositions = (
  a: { entity_path: string; key: string },
  b: { entity_path: string; key: string },
): number => compareCodePoints(a.entity_path, b.entity_path) || compareCodePoints(a.key, b.key);

/**
 * Order of whole addresses: namespace, then position. PostgreSQL's writers take their row locks
 * in this order (group commits, batches, vector fills), so that two of them never deadlock.
 */
export const compareAddresses = (
  a: { namespace: string; entity_path: string; key: string },
  b: { namespace: string; entity_path: string; key: string },
): number => compareCodePoints(a.namespace, b.namespace) || comparePositions(a, b);
