import type { Entry, EntryAddress } from '../../domain/entry.ts';
import { isLive } from '../../domain/entry.ts';
import { pathHasPrefix } from '../../domain/names.ts';
import { compareCodePoints } from '../../domain/order.ts';
import type { ListPage, ListQuery } from '../../ports/store.ts';
import type { Location } from './segment-log.ts';

/** What memory holds per entry: its newest durable version and where every version lies. */
export interface EntryState {
  head: Entry;
  /** locations[v - 1] is version v. */
  locations: Location[];
  /** Highest version accepted for writing (≥ head.version while a write is in flight). */
  reserved: number;
}

interface PathNode {
  entries: Map<string, EntryState>;
  sortedKeys: string[];
}

interface NamespaceNode {
  paths: Map<string, PathNode>;
  sortedPaths: string[];
}

/** First index in `sorted` whose item is not below `item` (code point order). */
const lowerBound = (sorted: string[], item: string): number => {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareCodePoints(sorted[mid] as string, item) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
};

const insertSorted = (sorted: string[], item: string): void => {
  sorted.splice(lowerBound(sorted, item), 0, item);
};

/**
 * The filesystem backend's in-memory index: namespace → entity path → key, with paths and
 * keys kept sorted so that a prefix list is a range walk, not a sort. During start-up
 * (`bulk`), inserts skip the sorted arrays and `finishBulk` sorts once.
 */
export class EntryIndex {
  private readonly namespaces = new Map<string, NamespaceNode>();
  private bulk = true;
  size = 0;

  get(address: EntryAddress): EntryState | undefined {
    return this.namespaces.get(address.namespace)?.paths.get(address.entity_path)?.entries.get(address.key);
  }

  /** The state for `address`, created (with no versions yet) when absent. */
  create(address: EntryAddress, head: Entry): EntryState {
    let ns = this.namespaces.get(address.namespace);
    if (!ns) {
      ns = { paths: new Map(), sortedPaths: [] };
      this.namespaces.set(address.namespace, ns);
    }
    let path = ns.paths.get(address.entity_path);
    if (!path) {
      path = { entries: new Map(), sortedKeys: [] };
      ns.paths.set(address.entity_path, path);
      if (!this.bulk) insertSorted(ns.sortedPaths, address.entity_path);
    }
    const state: EntryState = { head, locations: [], reserved: 0 };
    path.entries.set(address.key, state);
    if (!this.bulk) insertSorted(path.sortedKeys, address.key);
    this.size += 1;
    return state;
  }

  finishBulk(): void {
    for (const ns of this.namespaces.values()) {
      ns.sortedPaths = [...ns.paths.keys()].sort(compareCodePoints);
      for (const path of ns.paths.values()) path.sortedKeys = [...path.entries.keys()].sort(compareCodePoints);
    }
    this.bulk = false;
  }

  *states(): Generator<EntryState> {
    for (const ns of this.namespaces.values()) for (const path of ns.paths.values()) yield* path.entries.values();
  }

  list(query: ListQuery): ListPage {
    const ns = this.namespaces.get(query.namespace);
    const entries: Entry[] = [];
    if (!ns) return { entries, next: null };
    const after = query.after;
    const since = query.since === undefined ? undefined : Date.parse(query.since);
    const start = after ? after.entity_path : (query.prefix ?? '');
    for (let i = lowerBound(ns.sortedPaths, start); i < ns.sortedPaths.length; i++) {
      const path = ns.sortedPaths[i] as string;
      if (query.prefix !== undefined) {
        // Everything starting with the prefix is contiguous; past it, nothing can match.
        if (!path.startsWith(query.prefix)) break;
        if (!pathHasPrefix(path, query.prefix)) continue;
      }
      const node = ns.paths.get(path) as PathNode;
      const keys = node.sortedKeys;
      let k = 0;
      if (after && path === after.entity_path) {
        k = lowerBound(keys, after.key);
        if (keys[k] === after.key) k += 1;
      }
      for (; k < keys.length; k++) {
        const head = (node.entries.get(keys[k] as string) as EntryState).head;
        if (!isLive(head, query.now)) continue;
        if (query.agentId !== undefined && head.agent_id !== query.agentId) continue;
        if (since !== undefined && Date.parse(head.written_at) < since) continue;
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
