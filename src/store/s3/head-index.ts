import type { Entry, EntryAddress } from '../../domain/entry.ts';
import { isLive } from '../../domain/entry.ts';
import { pathHasPrefix } from '../../domain/names.ts';
import { compareCodePoints } from '../../domain/order.ts';
import type { ListPage, ListQuery } from '../../ports/store.ts';

interface PathNode {
  heads: Map<string, Entry>;
  sortedKeys: string[];
}

interface NamespaceNode {
  paths: Map<string, PathNode>;
  sortedPaths: string[];
}

const lowerBound = (sorted: readonly string[], item: string): number => {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareCodePoints(sorted[mid] as string, item) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
};

/**
 * This replica's view of every entry's newest version: namespace → entity path → key, with
 * paths and keys kept in code point order so a prefix list is a range walk. Fed by local
 * appends, the change log and head() repairs, in any order: the higher version always wins,
 * so a change seen late or twice never moves a head backwards. While loading (`bulk`),
 * inserts skip the sorted arrays and `finishBulk` sorts once.
 */
export class HeadIndex {
  private readonly namespaces = new Map<string, NamespaceNode>();
  private bulk = true;
  size = 0;

  get(address: EntryAddress): Entry | undefined {
    return this.namespaces.get(address.namespace)?.paths.get(address.entity_path)?.heads.get(address.key);
  }

  /** Keep `entry` if it is newer than the head we hold; says whether it was. */
  apply(entry: Entry): boolean {
    let ns = this.namespaces.get(entry.namespace);
    if (!ns) {
      ns = { paths: new Map(), sortedPaths: [] };
      this.namespaces.set(entry.namespace, ns);
    }
    let path = ns.paths.get(entry.entity_path);
    if (!path) {
      path = { heads: new Map(), sortedKeys: [] };
      ns.paths.set(entry.entity_path, path);
      if (!this.bulk) ns.sortedPaths.splice(lowerBound(ns.sortedPaths, entry.entity_path), 0, entry.entity_path);
    }
    const current = path.heads.get(entry.key);
    if (current && current.version >= entry.version) return false;
    path.heads.set(entry.key, entry);
    if (!current) {
      this.size += 1;
      if (!this.bulk) path.sortedKeys.splice(lowerBound(path.sortedKeys, entry.key), 0, entry.key);
    }
    return true;
  }

  finishBulk(): void {
    for (const ns of this.namespaces.values()) {
      ns.sortedPaths = [...ns.paths.keys()].sort(compareCodePoints);
      for (const path of ns.paths.values()) path.sortedKeys = [...path.heads.keys()].sort(compareCodePoints);
    }
    this.bulk = false;
  }

  *heads(): Generator<Entry> {
    for (const ns of this.namespaces.values()) for (const path of ns.paths.values()) yield* path.heads.values();
  }

  list(query: ListQuery): ListPage {
    const ns = this.namespaces.get(query.namespace);
    const entries: Entry[] = [];
    if (!ns || query.limit < 1) return { entries, next: null };
    const { after, prefix } = query;
    const since = query.since === undefined ? undefined : Date.parse(query.since);
    const startPath = after && (prefix === undefined || compareCodePoints(after.entity_path, prefix) > 0) ? after.entity_path : (prefix ?? '');
    for (let i = lowerBound(ns.sortedPaths, startPath); i < ns.sortedPaths.length; i++) {
      const path = ns.sortedPaths[i] as string;
      if (prefix !== undefined) {
        // Paths starting with the prefix are contiguous; `repos/acme-corp` sits among them
        // but is not under `repos/acme`, hence the segment-wise check.
        if (!path.startsWith(prefix)) break;
        if (!pathHasPrefix(path, prefix)) continue;
      }
      const node = ns.paths.get(path) as PathNode;
      let k = 0;
      if (after && path === after.entity_path) {
        k = lowerBound(node.sortedKeys, after.key);
        if (node.sortedKeys[k] === after.key) k += 1;
      }
      for (; k < node.sortedKeys.length; k++) {
        const head = node.heads.get(node.sortedKeys[k] as string) as Entry;
        if (!isLive(head, query.now)) continue;
        if (query.agentId !== undefined && head.agent_id !== query.agentId) continue;
        if (since !== undefined && Date.parse(head.written_at) < since) continue;
        // One match past the page proves there is a next page; without it, `next` is null.
        if (entries.length === query.limit) {
          const last = entries[entries.length - 1] as Entry;
          return { entries, next: { entity_path: last.entity_path, key: last.key } };
        }
        entries.push(head);
      }
    }
    return { entries, next: null };
  }
}
