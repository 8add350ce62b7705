import type { Entry, EntryAddress } from '../../domain/entry.ts';
import type { ForgetTarget, LinkedToQuery, ListPage, ListQuery } from '../../ports/store.ts';
import { HeadTree } from '../head-tree.ts';
import { freezeHead } from '../shared-parts.ts';

/**
 * This replica's view of every entry's newest version: namespace → entity path → key, with
 * paths and keys kept in code point order so a prefix list is a range walk. Fed by local
 * appends, the change log and head() repairs, in any order: the higher version always wins,
 * so a change seen late or twice never moves a head backwards. While loading (`bulk`),
 * inserts skip the sorted arrays and `finishBulk` sorts once.
 */
export class HeadIndex {
  private readonly tree = new HeadTree<Entry>((entry) => entry);

  get size(): number {
    return this.tree.size;
  }

  get(address: EntryAddress): Entry | undefined {
    return this.tree.get(address);
  }

  /** Keep `entry` if it is newer than the head we hold; says whether it was. */
  apply(entry: Entry): boolean {
    const current = this.tree.get(entry);
    if (current && current.version >= entry.version) return false;
    const head = freezeHead(entry);
    this.tree.set(head, head);
    return true;
  }

  /** Drop every head `target` names (forget); answers the heads dropped. */
  forget(target: ForgetTarget): Entry[] {
    const heads = [...this.tree.under(target.namespace, target.prefix, target.key)];
    for (const head of heads) this.tree.delete(head);
    return heads;
  }

  linkedTo(target: EntryAddress, query?: LinkedToQuery): Entry[] {
    return this.tree.linkedTo(target, query);
  }

  finishBulk(): void {
    this.tree.finishBulk();
  }

  heads(): Generator<Entry> {
    return this.tree.values();
  }

  list(query: ListQuery): ListPage {
    return this.tree.list(query);
  }

  /** The namespaces holding at least one head. */
  namespaces(): string[] {
    return this.tree.namespaceNames();
  }

  /** Heads in list order, unfiltered (see HeadTree.walk). */
  walk(query: ListQuery): Generator<Entry> {
    return this.tree.walk(query);
  }
}
