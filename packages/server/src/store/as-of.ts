import type { Entry } from '../domain/entry.ts';
import type { ListPage, ListQuery } from '../ports/store.ts';
import { listFilter } from './list-filter.ts';

/** Whether `entry` was written at or before `at` (ms since the epoch). */
export const writtenBy = (entry: Entry, at: number): boolean => Date.parse(entry.written_at) <= at;

/**
 * The version of an entry current at `at`, for backends that read versions one by one
 * (filesystem, S3): walk down from the head until a version written by then. Versions are
 * numbered in write order, so the first one found is the newest; the walk costs one read per
 * version written after `at`, none for an entry unchanged since. Retention drops an entry's
 * oldest versions, all below a kept one: the first version missing ends the walk (on S3 each
 * of the hundred reads below it was a request finding nothing).
 */
export const walkBackTo = async (head: Entry | null, at: number, read: (version: number) => Promise<Entry | null>): Promise<Entry | null> => {
  if (!head) return null;
  if (writtenBy(head, at)) return head;
  for (let v = head.version - 1; v >= 1; v--) {
    const entry = await read(v);
    if (!entry) return null;
    if (writtenBy(entry, at)) return entry;
  }
  return null;
};

/**
 * A list page as of `query.asOf` over heads walked in (entity_path, key) order from the
 * cursor and under the prefix (HeadTree.walk): each head is replaced by its version current
 * then, and liveness, agent and time filters apply to that version, as `list` applies them
 * to heads. Entries changed since cost a read each; the rest are answered from memory.
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
