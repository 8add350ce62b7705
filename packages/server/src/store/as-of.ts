import type { Entry } from '../domain/entry.ts';
import type { ListPage, ListQuery } from '../ports/store.ts';
import { listFilter } from './list-filter.ts';

/** Whether `entry` was written at or before `at` (ms since the epoch). */
export const writtenBy = (entry: Entry, at: number): boolean => Date.parse(entry.written_at) <= at;

/**
 * How far a version's written_at may lie before its predecessor's. Every write stamps its
 * version no earlier than the head it follows (services/append-version.ts), but an import
 * keeps an archive's times as they are and lets a version run up to this much backwards, for
 * the clocks of the replicas that wrote it (CLOCK_MARGIN_MS, services/archive/archived-history.ts,
 * which refuses anything further; a unit test keeps the two equal).
 */
export const BACKWARDS_MARGIN_MS = 5 * 60_000;

/**
 * The version of an entry current at `at` — its highest-numbered version written at or before
 * `at` (as PostgreSQL's query answers) — for backends that read versions one by one
 * (filesystem, S3), in about 2·log2(versions written since) reads rather than one per version.
 *
 * Versions are numbered in write order and written_at never goes down by more than `margin`
 * from one to the next, so a version written `e` ms after `at` proves the next ceil(e/margin)-1
 * versions above it were written after `at` too. The search gallops down from the head and
 * bisects to a version written by then with the next one not, then checks the versions above by
 * those jumps: in a history that never runs backwards each jump covers everything written more
 * than `margin` after the one it starts from (a few reads, the cache serving most), and a
 * version found written by `at` after all restarts the bisection above it — so the answer is
 * the same as walking down from the head.
 *
 * Retention drops an entry's oldest versions (never the head): a missing version is taken as
 * below the oldest kept, so the search goes on above it and never answers one under it. (On
 * S3 a drop pass cut short can leave older versions under a run of dropped ones; a search
 * that never lands in the run may answer one of those, which the store still holds.)
 */
export const walkBackTo = async (
  head: Entry | null,
  at: number,
  read: (version: number) => Promise<Entry | null>,
  margin: number = BACKWARDS_MARGIN_MS,
): Promise<Entry | null> => {
  if (!head) return null;
  if (writtenBy(head, at)) return head;
  const top = head.version;
  const seen = new Map<number, Entry | null>([[top, head]]);
  const get = async (v: number): Promise<Entry | null> => {
    if (seen.has(v)) return seen.get(v) ?? null;
    const entry = await read(v);
    seen.set(v, entry);
    return entry;
  };
  // `lo`: 0, a missing version, or one written by `at` (the answer so far); everything at or
  // below it is settled. `hi`: a version above it not written by `at`.
  let lo = 0;
  let hi = top;
  // Gallop down from the head first (1, 2, 4, … versions below it), so that an entry changed a
  // few times since `at` costs a few reads, as the walk did, and a long history about 2·log2.
  for (let step = 1; top - step >= 1; step *= 2) {
    const entry = await get(top - step);
    if (!entry || writtenBy(entry, at)) {
      lo = top - step;
      break;
    }
    hi = top - step;
  }
  for (;;) {
    // Bisect (lo, hi).
    while (hi - lo > 1) {
      const mid = lo + Math.floor((hi - lo) / 2);
      const entry = await get(mid);
      if (!entry || writtenBy(entry, at)) lo = mid;
      else hi = mid;
    }
    // Check (hi, top) by jumps from versions written after `at`; `hi` is one (or is `top`).
    let found = 0;
    for (let v = hi; v < top; ) {
      const entry = await get(v);
      if (!entry || writtenBy(entry, at)) {
        found = v;
        break;
      }
      const excess = Date.parse(entry.written_at) - at;
      v = margin > 0 ? v + Math.ceil(excess / margin) : top;
    }
    if (found === 0) return lo === 0 ? null : (seen.get(lo) ?? null);
    lo = found;
    hi = top;
  }
};

/**
 * A list page as of `query.asOf` over heads walked in (entity_path, key) order from the
 * cursor and under the prefix (HeadTree.walk): each head is replaced by its version current
 * then, and liveness, agent and time filters apply to that version, as `list` applies them
 * to heads. Entries changed since cost a few reads each (walkBackTo); the rest are answered
 * from memory.
 */
export const listAsOf = async (heads: Iterable<Entry>, query: ListQuery & { asOf: number }, read: (head: Entry, version: number) => Promise<Entry | null>): Promise<ListPage> => {
  const entries: Entry[] = [];
  if (query.limit < 1) return { entries, next: null };
  const listed = listFilter(query);
  for (const head of heads) {
    const entry = await walkBackTo(head, query.asOf, (v) => read(head, v));
    if (!entry || !listed(entry)) continue;
    if (entries.length === query.limit) {
      const last = entries[entries.length - 1] as Entry;
      return { entries, next: { entity_path: last.entity_path, key: last.key } };
    }
    entries.push(entry);
  }
  return { entries, next: null };
};
