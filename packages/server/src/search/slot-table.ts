import type { Entry } from '../domain/entry.ts';

const idOf = (e: Entry): string => `${e.namespace}\u0000${e.entity_path}\u0000${e.key}`;

/**
 * Dense document numbers ("slots") for the in-process indexes. A new version takes a new
 * slot and kills the old one, so postings are only ever appended; `compactIfSparse`
 * renumbers once dead slots pile up. The newest version seen per entry is kept even for a
 * tombstone, so a late, older version (the S3 change log may deliver out of order) is ignored.
 */
export class SlotTable {
  private entries: (Entry | undefined)[] = [];
  private live: Uint8Array = new Uint8Array(1024);
  private readonly byAddress = new Map<string, { slot: number; version: number }>();
  private dead = 0;

  /** Slots in use, dead ones included. */
  get size(): number {
    return this.entries.length;
  }

  /** 1 per live slot; read by the indexes while scanning postings. Replaced as it grows. */
  get alive(): Uint8Array {
    return this.live;
  }

  entry(slot: number): Entry | undefined {
    return this.entries[slot];
  }

  slotOf(entry: Entry): number | undefined {
    const known = this.byAddress.get(idOf(entry));
    return known && known.slot >= 0 ? known.slot : undefined;
  }

  /**
   * Take `entry` if it is newer than the version held. Returns undefined when it is not (and
   * nothing changed), else the slot it replaced (-1 for none); a tombstone takes no slot.
   */
  replace(entry: Entry): number | undefined {
    const id = idOf(entry);
    const known = this.byAddress.get(id);
    if (known && known.version >= entry.version) return undefined;
    const old = known?.slot ?? -1;
    if (old >= 0) {
      this.entries[old] = undefined;
      this.live[old] = 0;
      this.dead += 1;
    }
    if (entry.deleted) {
      this.byAddress.set(id, { slot: -1, version: entry.version });
      return old;
    }
    const slot = this.entries.length;
    this.entries.push(entry);
    if (slot >= this.live.length) {
      const grown = new Uint8Array(this.live.length * 2);
      grown.set(this.live);
      this.live = grown;
    }
    this.live[slot] = 1;
    this.byAddress.set(id, { slot, version: entry.version });
    return old;
  }

  /** Renumber live slots densely when over a quarter are dead; returns old → new (-1 = gone). */
  compactIfSparse(): Int32Array | null {
    if (this.dead < 10_000 || this.dead < this.entries.length / 4) return null;
    const remap = new Int32Array(this.entries.length).fill(-1);
    const entries: Entry[] = [];
    for (let slot = 0; slot < this.entries.length; slot++) {
      const entry = this.entries[slot];
      if (!entry) continue;
      remap[slot] = entries.length;
      (this.byAddress.get(idOf(entry)) as { slot: number }).slot = entries.length;
      entries.push(entry);
    }
    this.entries = entries;
    this.live = new Uint8Array(Math.max(1024, entries.length * 2)).fill(1, 0, entries.length);
    this.dead = 0;
    return remap;
  }
}
