import type { Entry } from '../domain/entry.ts';
import type { ListPosition, Store } from '../ports/store.ts';

const PAGE = 1000;

/**
 * Live entries at exactly `path`. A prefix list returns the path's own entries before any
 * deeper path's (they sort first), so the read stops at the first deeper one: the cost is
 * that path's entries, not its subtree's.
 */
export const entriesAt = async (store: Store, namespace: string, path: string, now: number): Promise<Entry[]> => {
  const out: Entry[] = [];
  let after: ListPosition | undefined;
  for (;;) {
    const page = await store.list({ namespace, prefix: path, limit: PAGE, now, ...(after ? { after } : {}) });
    for (const e of page.entries) {
      if (e.entity_path !== path) return out;
      out.push(e);
    }
    if (!page.next) return out;
    after = page.next;
  }
};

/** Every live entry of a namespace, one path at a time, from one ordered scan. */
export async function* pathGroups(store: Store, namespace: string, now: () => number): AsyncGenerator<Entry[]> {
  let group: Entry[] = [];
  let after: ListPosition | undefined;
  do {
    const page = await store.list({ namespace, limit: PAGE, now: now(), ...(after ? { after } : {}) });
    for (const e of page.entries) {
      if (group.length > 0 && group[0]?.entity_path !== e.entity_path) {
        yield group;
        group = [];
      }
      group.push(e);
    }
    after = page.next ?? undefined;
  } while (after);
  if (group.length > 0) yield group;
}
