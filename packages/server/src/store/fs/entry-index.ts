import type { Entry, EntryAddress } from '../../domain/entry.ts';
import type { LinkedToQuery, ListPage, ListQuery } from '../../ports/store.ts';
import { HeadTree } from '../head-tree.ts';
import { freezeHead } from '../shared-parts.ts';
import type { Location } from './segment-log.ts';

/** What memory holds per entry: its newest durable version and where every version lies. */
export interface EntryState {
  head: Entry;
  /**
   * How many of the oldest versions the entry no longer holds (retention dropped them, or an
   * import began its history past version 1): counted, not listed, so a history whose first
   * kept version is large costs nothing per version it lacks, in memory or in the checkpoint.
   */
  base: number;
  /** locations[i] is version base + i + 1; null where retention dropped that version. */
  locations: (Location | null)[];
}

/** Where version `version` lies, or null when the entry does not hold it. */
export const locationOf = (state: EntryState, version: number): Location | null => {
  const i = version - state.base - 1;
  return i >= 0 ? (state.locations[i] ?? null) : null;
};

/** Move version `version` (one the entry holds) to `location`. */
export const moveLocation = (state: EntryState, version: number, location: Location): void => {
  state.locations[version - state.base - 1] = location;
};

/** The newest version with a place (dropped or not): the base plus the places listed. */
export const lastPlaced = (state: EntryState): number => state.base + state.locations.length;

/**
 * Count the leading dropped versions into the base instead, so an entry that retention prunes
 * as it grows keeps a list of what it holds, not of everything it ever had.
 */
export const foldDropped = (state: EntryState): void => {
  let n = 0;
  while (n < state.locations.length && state.locations[n] === null) n += 1;
  if (n === 0) return;
  state.locations = state.locations.slice(n);
  state.base += n;
};

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
   * A new entry's state, with no versions yet (the caller pushes the first, version base + 1). Every head held is
   * frozen with its empty parts shared (freezeHead): versions are immutable, freezing lets the
   * HTTP layer cache their JSON, and sharing saves a few objects an entry.
   */
  create(address: EntryAddress, head: Entry, base = 0): EntryState {
    const state: EntryState = { head: freezeHead(head), base, locations: [] };
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

  linkedTo(target: EntryAddress, query?: LinkedToQuery): Entry[] {
    return this.tree.linkedTo(target, query).map((s) => s.head);
  }

  finishBulk(): void {
    this.tree.finishBulk();
  }

  states(): Generator<EntryState> {
    return this.tree.values();
  }

  /** Every entry's head, in the order of `states`. */
  *heads(): Generator<Entry> {
    for (const state of this.tree.values()) yield state.head;
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
