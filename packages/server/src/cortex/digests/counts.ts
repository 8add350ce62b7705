import { compareCodePoints } from '../../domain/order.ts';

/**
 * Maps a digest keeps by name (issues per status, deployments per environment, paths per
 * type) in one canonical order: the heaviest first, ties by name (code points). A map read
 * back from the store may hold its keys in another order than it was built in (PostgreSQL's
 * jsonb puts shorter keys first), so anything a digest derives from one (headline text,
 * merged maps, lists, ties) goes through these rather than Object.entries: a digest reloaded
 * and compiled again then reads, and hashes, exactly as it did.
 */
export const orderedEntries = <V>(map: Readonly<Record<string, V>>, weight: (value: V) => number): Array<[string, V]> =>
  Object.entries(map).sort((a, b) => weight(b[1]) - weight(a[1]) || compareCodePoints(a[0], b[0]));

/** A count map's entries, largest count first, ties by name. */
export const countEntries = (counts: Readonly<Record<string, number>>): Array<[string, number]> => orderedEntries(counts, (n) => n);

/** The same map with its keys in canonical order (see orderedEntries), as stored and served. */
export const ordered = <V>(map: Readonly<Record<string, V>>, weight: (value: V) => number): Record<string, V> =>
  Object.fromEntries(orderedEntries(map, weight));

/** A count map with its keys in canonical order, largest count first. */
export const orderedCounts = (counts: Readonly<Record<string, number>>): Record<string, number> => ordered(counts, (n) => n);
