import type { Entry, EntryAddress } from '../../domain/entry.ts';
import type { ListPage, ListQuery } from '../../ports/store.ts';
import { HeadTree } from '../head-tree.ts';
import { freezeHead } from '../shared-parts.ts';
import type { Location } from './segment-log.ts';

/** What memory holds per entry: its newest durable version and where every version lies. */
export interface EntryState {
  head: Entry;
  /** locations[v - 1] is version v; null where retention dropped that version. */
  locations: (Location | null)[];
}

/** The filesystem backend's in-memory index of entries (see HeadTree for the ordering). */
export class EntryIndex {
  private readonly tree = new HeadTree<EntryState>((state) => state.head);

  get size(): number {
    return this.tree.size;
  }

  get(address: EntryAddress): EntryState | undefined {
    return this.tree.get(address);
  }

  /**
   * A new entry's state, with no versions yet (the caller pushes the first). Every head held is
   * frozen with its empty parts shared (freezeHead): versions are immutable, freezing lets the
   * HTTP layer cache their JSON, and sharing saves a few objects an entry.
   */
  create(address: EntryAddress, head: Entry): EntryState {
    const state: EntryState = { head: freezeHead(head), locations: [] };
    this.tree.set(address, state);
    return state;
  }

  /** Make `entry` the newest version of the entry `state` holds. */
  setHead(state: EntryState, entry: Entry): void {
    state.head = freezeHead(entry);
    // Set again so the tree's reverse links follow the new head.
    this.tree.set(entry, state);
  }

  /** Remove an entry (forget); false when it was not there. */
  delete(address: EntryAddress): boolean {
    return this.tree.delete(address);
  }

  /** The entries of `namespace` under `prefix` (segment-wise), or the one `key` at `prefix`. */
  under(namespace: string, prefix: string, key?: string): EntryState[] {
    return [...this.tree.under(namespace, prefix, key)];
  }

  linkedTo(target: EntryAddress): Entry[] {
    return this.tree.linkedTo(target).map((s) => s.head);
  }

  finishBulk(): void {
    this.tree.finishBulk();
  }

  states(): Generator<EntryState> {
    return this.tree.values();
  }

  list(query: ListQuery): ListPage {
    return this.tree.list(query);
  }

  /** Heads in list order, unfiltered (see HeadTree.walk). */
  walk(query: ListQuery): Generator<Entry> {
    return this.tree.walk(query);
  }
}
