import type { Entry, EntryAddress } from '../domain/entry.ts';
import { pathHasPrefix } from '../domain/names.ts';
import { compareCodePoints } from '../domain/order.ts';
import type { LinkedToQuery, ListPage, ListQuery } from '../ports/store.ts';
import { isLive } from '../domain/entry.ts';
import { listFilter } from './list-filter.ts';
import { SortedStrings, lowerBound } from './sorted-strings.ts';

interface PathNode<S> {
  items: Map<string, S>;
  keys: SortedStrings;
}

interface NamespaceNode<S> {
  paths: Map<string, PathNode<S>>;
  pathOrder: SortedStrings;
}

/**
 * The most heads one `list` call examines (see HeadTree.list): about 5–20 ms of walking and
 * filtering, so a filtered list of a large namespace answers a short page with a cursor
 * rather than blocking the event loop for the whole walk.
 */
export const LIST_SCAN_HEADS = 10_000;

/** Names never hold control characters (domain/names.ts), so NUL separates the parts unambiguously. */
const idOf = (namespace: string, path: string, key: string): string => `${namespace}\u0000${path}\u0000${key}`;

/**
 * Per-entry state held in memory by the backends that serve lists themselves (filesystem,
 * S3): namespace → entity path → key, with paths and keys kept in code point order so a
 * prefix list is a range walk, not a sort. `S` is the backend's state per entry; `headOf`
 * finds its newest version. While loading (`bulk`), inserts skip the orders and
 * `finishBulk` sorts the paths once, and each path's keys when first read.
 */
export class HeadTree<S> {
  private readonly namespaces = new Map<string, NamespaceNode<S>>();
  /** Reverse links of the heads: target id → the addresses whose head links to it. */
  private readonly incoming = new Map<string, Map<string, EntryAddress>>();
  /** Each source's current link targets, so a new head can drop what its old one linked. */
  private readonly outgoing = new Map<string, string[]>();
  private readonly headOf: (state: S) => Entry;
  private bulk = true;
  size = 0;

  constructor(headOf: (state: S) => Entry) {
    this.headOf = headOf;
  }

  get(address: EntryAddress): S | undefined {
    return this.namespaces.get(address.namespace)?.paths.get(address.entity_path)?.items.get(address.key);
  }

  /** Store `state` for `address`, placing a new key in order. */
  set(address: EntryAddress, state: S): void {
    let ns = this.namespaces.get(address.namespace);
    if (!ns) {
      ns = { paths: new Map(), pathOrder: new SortedStrings() };
      this.namespaces.set(address.namespace, ns);
    }
    let path = ns.paths.get(address.entity_path);
    if (!path) {
      path = { items: new Map(), keys: new SortedStrings() };
      ns.paths.set(address.entity_path, path);
      if (!this.bulk) ns.pathOrder.add(address.entity_path);
    }
    const added = !path.items.has(address.key);
    if (added) {
      this.size += 1;
      if (!this.bulk) path.keys.add(address.key);
    }
    path.items.set(address.key, state);
    // A new address has no links noted (delete drops them): one whose head links nowhere has
    // nothing to note, and a store's load makes no name for each of its million entries.
    const head = this.headOf(state);
    if (!added || (head.links?.length ?? 0) > 0) this.noteLinks(address, head);
  }

  /**
   * Remove the entry at `address` (forget): its state, its place in the sorted orders and
   * the reverse links its head made. Resolves false when it was not there.
   */
  delete(address: EntryAddress): boolean {
    const ns = this.namespaces.get(address.namespace);
    const path = ns?.paths.get(address.entity_path);
    if (!ns || !path || !path.items.has(address.key)) return false;
    path.items.delete(address.key);
    this.size -= 1;
    // While loading, the orders are not kept: finishBulk builds them from what is left.
    if (!this.bulk) path.keys.remove(address.key);
    if (path.items.size === 0) {
      ns.paths.delete(address.entity_path);
      if (!this.bulk) ns.pathOrder.remove(address.entity_path);
      if (ns.paths.size === 0) this.namespaces.delete(address.namespace);
    }
    this.noteLinks(address, { links: [] } as unknown as Entry);
    return true;
  }

  /** The states of `namespace` whose entity path is under `prefix` (segment-wise), and key is `key` when given. */
  *under(namespace: string, prefix: string, key?: string): Generator<S> {
    const ns = this.namespaces.get(namespace);
    if (!ns) return;
    for (const [path, node] of ns.paths) {
      if (!pathHasPrefix(path, prefix)) continue;
      if (key === undefined) yield* node.items.values();
      else if (path === prefix && node.items.has(key)) yield node.items.get(key) as S;
    }
  }

  /** Entries whose head links to `target` (see Store.linkedTo). */
  linkedTo(target: EntryAddress, query: LinkedToQuery = {}): S[] {
    const sources = this.incoming.get(idOf(target.namespace, target.entity_path, target.key));
    const found: S[] = [];
    const limit = query.limit ?? Number.POSITIVE_INFINITY;
    if (!sources || limit <= 0) return found;
    const { relation, liveAt, prefixes } = query;
    for (const address of sources.values()) {
      if (prefixes && !prefixes.some((prefix) => pathHasPrefix(address.entity_path, prefix))) continue;
      const state = this.get(address);
      if (state === undefined) continue;
      if (liveAt !== undefined || relation !== undefined) {
        const head = this.headOf(state);
        if (liveAt !== undefined && !isLive(head, liveAt)) continue;
        if (relation !== undefined && !(head.links ?? []).some((l) => l.relation === relation && l.key === target.key && l.entity_path === target.entity_path)) continue;
      }
      found.push(state);
      if (found.length >= limit) break;
    }
    return found;
  }

  private noteLinks(address: EntryAddress, head: Entry): void {
    const source = idOf(address.namespace, address.entity_path, address.key);
    const before = this.outgoing.get(source) ?? [];
    const after = (head.links ?? []).map((l) => idOf(address.namespace, l.entity_path, l.key));
    if (before.length === 0 && after.length === 0) return;
    for (const target of before) {
      const sources = this.incoming.get(target);
      sources?.delete(source);
      if (sources?.size === 0) this.incoming.delete(target);
    }
    for (const target of after) {
      let sources = this.incoming.get(target);
      if (!sources) this.incoming.set(target, (sources = new Map()));
      sources.set(source, { namespace: address.namespace, entity_path: address.entity_path, key: address.key });
    }
    if (after.length === 0) this.outgoing.delete(source);
    else this.outgoing.set(source, after);
  }

  finishBulk(): void {
    for (const ns of this.namespaces.values()) {
      ns.pathOrder = SortedStrings.of(ns.paths.keys());
      // A path's keys are sorted when a list first walks them: most never are.
      for (const path of ns.paths.values()) path.keys = SortedStrings.unsorted(path.items.keys());
    }
    this.bulk = false;
  }

  /** The namespaces holding at least one head (an emptied one is dropped, see remove). */
  namespaceNames(): string[] {
    return [...this.namespaces.keys()];
  }

  *values(): Generator<S> {
    for (const ns of this.namespaces.values()) for (const path of ns.paths.values()) yield* path.items.values();
  }

  /**
   * Live heads in (entity_path, key) order after `query.after`, filtered, a page at a time.
   * At most `scanBound` heads are examined per call: a filter few heads pass (`since` a
   * recent time, an agent with no entries) would otherwise walk every head under the prefix
   * in one synchronous stretch, and hold up every other request meanwhile. When the bound
   * stops the walk, the page holds what it found (fewer than `query.limit` entries, maybe
   * none) and `next` is the last head examined, so the next page goes on from there.
   */
  list(query: ListQuery, scanBound: number = LIST_SCAN_HEADS): ListPage {
    const entries: Entry[] = [];
    if (query.limit < 1) return { entries, next: null };
    const listed = listFilter(query);
    let examined = 0;
    let seen: Entry | undefined;
    for (const head of this.walk(query)) {
      // Another head is waiting: the bound, not the end of the list, stops this page.
      if (examined >= scanBound && seen) return { entries, next: { entity_path: seen.entity_path, key: seen.key } };
      examined += 1;
      seen = head;
      if (!listed(head)) continue;
      // One match past the page proves there is a next page; without it, `next` is null.
      if (entries.length === query.limit) {
        const last = entries[entries.length - 1] as Entry;
        return { entries, next: { entity_path: last.entity_path, key: last.key } };
      }
      entries.push(head);
    }
    return { entries, next: null };
  }

  /**
   * Every head of `query.namespace` under `query.prefix`, after `query.after`, in
   * (entity_path, key) order, unfiltered: what a list walks (lists as of a past instant
   * replace each head by an older version before filtering, see store/as-of.ts).
   */
  *walk(query: Pick<ListQuery, 'namespace' | 'prefix' | 'after'>): Generator<Entry> {
    const ns = this.namespaces.get(query.namespace);
    if (!ns) return;
    const { after, prefix } = query;
    const startPath = after && (prefix === undefined || compareCodePoints(after.entity_path, prefix) > 0) ? after.entity_path : (prefix ?? '');
    const paths = ns.pathOrder.sorted();
    for (let i = lowerBound(paths, startPath); i < paths.length; i++) {
      const path = paths[i] as string;
      if (prefix !== undefined) {
        // Paths starting with the prefix are contiguous; `repos/acme-corp` sits among them
        // but is not under `repos/acme`, hence the segment-wise check.
        if (!path.startsWith(prefix)) break;
        if (!pathHasPrefix(path, prefix)) continue;
      }
      // Forgotten since the walk began (its caller awaited between items).
      const node = ns.paths.get(path);
      if (!node) continue;
      const keys = node.keys.sorted();
      let k = 0;
      if (after && path === after.entity_path) {
        k = lowerBound(keys, after.key);
        if (keys[k] === after.key) k += 1;
      }
      for (; k < keys.length; k++) {
        const state = node.items.get(keys[k] as string);
        if (state !== undefined) yield this.headOf(state);
      }
    }
  }
}
