import type { Entry } from '../domain/entry.ts';
import { LIMITS } from '../domain/limits.ts';
import { entryMemo } from '../search-rules/entry-memo.ts';

/**
 * A stored version's JSON, kept for the versions answered lately (at most MAX_CACHED_CHARS
 * characters; weakly held, started afresh when full). The response serialiser writes each
 * version of an answer from here (http/serialize.ts), and the paged reads measure their pages
 * with it: the JSON a page is measured by is the JSON then sent, stringified once.
 */
const MAX_CACHED_CHARS = 32 * 1024 * 1024;
export const entryJson = entryMemo((entry) => JSON.stringify(entry), (json) => json.length, MAX_CACHED_CHARS);

/**
 * How many of `entries` (in order) fit in a page whose entries already take `used` characters
 * of JSON: those whose JSON stays within `budget` (LIMITS.pageJsonChars), and always at least
 * one into an empty page, so a page always moves on. `size`: the characters taken with them.
 */
export const fitInPage = (entries: readonly Entry[], used = 0, budget: number = LIMITS.pageJsonChars, empty = used === 0): { count: number; size: number } => {
  let size = used;
  let count = 0;
  for (const entry of entries) {
    const next = size + entryJson(entry).length + 1;
    if (next > budget && !(empty && count === 0)) break;
    size = next;
    count++;
  }
  return { count, size };
};

/**
 * How many rows to read next from a store for a page of `wanted` more entries, `used` of
 * `budget` characters taken by `kept` entries so far: the first read takes at most
 * FIRST_READ (a list of 1,000 entries near the value limit would otherwise be read whole,
 * ~600 MB, to answer 16 MiB of it), later reads as many as the budget left holds at the mean
 * size seen, and never fewer than FIRST_READ.
 */
const FIRST_READ = 100;
export const nextRead = (wanted: number, kept: number, used: number, budget: number = LIMITS.pageJsonChars): number => {
  if (kept === 0) return Math.min(wanted, FIRST_READ);
  const mean = Math.max(1, used / kept);
  return Math.min(wanted, Math.max(FIRST_READ, Math.floor((budget - used) / mean)));
};
