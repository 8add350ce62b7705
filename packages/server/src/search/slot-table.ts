import type { Entry } from '../domain/entry.ts';

const idOf = (e: Entry): string => `${e.namespace}\u0000${e.entity_path}\u0000${e.key}`;

/** A copy of `array` at `size` elements, the rest zero. */
const widened = <T extends Uint8Array | Uint16Array>(array: T, size: number): T => {
  const copy = new (array.constructor as new (length: number) => T)(size);
  copy.set(array);
  return copy;
};

/** Slots restored between two calls to the pause: about a millisecond's work, so a slice ends close to its length. */
const RESTORE_PAUSE_EVERY = 1024;

/**
 * Namespaces numbered for `namespaceAt` (0 is none: a namespace first seen after these has no
 * number, and those share one number's search statistics, text-index.ts); 0xffff marks a
 * removed slot there.
 */
const MAX_NAMESPACE_CODES = 65_534;

/** What the table knows of an address: the slot holding its newest version (-1: none, a tombstone) and that version. */
interface Known {
  slot: number;
  version: number;
}

/**
 * Dense document numbers ("slots") for the in-process indexes. A new version takes a new
 * slot and kills the old one, so postings are only ever appended (a version of the same text
 * takes its predecessor's slot instead: `renew`, which adds no posting); `compactIfSparse`
 * renumbers once dead slots pile up. The newest version seen per entry is kept even for a
 * tombstone, so a late, older version (the S3 change log may deliver out of order) is ignored.
 */
export class SlotTable {
  private entries: (Entry | undefined)[] = [];
  /**
   * Per live slot, its address's record in `byAddress`: a renumbering moves these with the
   * slots, where walking the map's million records to renumber them took over half its pause.
   */
  private known: (Known | undefined)[] = [];
  private live: Uint8Array = new Uint8Array(1024);
  /**
   * Per slot, its entry's namespace number and whether the entry must be read to know it is
   * live (it expires). A search's filter is most often "this namespace, live now": answered from
   * these two arrays, it reads no entry object, where reading one at random among a million
   * cost a cache miss or two (a quarter of a vector search at 1M entries).
   */
  private namespaces: Uint16Array = new Uint16Array(1024);
  private expiring: Uint8Array = new Uint8Array(1024);
  private readonly namespaceCodes = new Map<string, number>();
  private readonly byAddress = new Map<string, Known>();
  private dead = 0;
  /** Addresses of slots taken from a saved index and not yet matched to the store (see restore). */
  private restored: readonly string[] = [];
  /** Whether the saved index named some address twice (see restoredAt). */
  private restoredTwice = false;
  /** Bumped by every renumbering, so a save in progress knows its slot numbers went stale. */
  generation = 0;

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

  /** The number of a namespace some slot has held (0: none, or one of too many to number). */
  namespaceCode(namespace: string): number {
    return this.namespaceCodes.get(namespace) ?? 0;
  }

  /** The namespace number of a slot's entry (0 for none), and whether its entry may expire. */
  namespaceAt(slot: number): number {
    return this.namespaces[slot] as number;
  }

  /** Every slot's namespace number (namespaceAt), as held: a view, replaced as the table grows. */
  get namespaceNumbers(): Uint16Array {
    return this.namespaces;
  }

  mayExpire(slot: number): boolean {
    return this.expiring[slot] === 1;
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
    if (old >= 0) this.kill(old);
    if (entry.deleted) {
      this.byAddress.set(id, { slot: -1, version: entry.version });
      return old;
    }
    const slot = this.entries.length;
    const record = { slot, version: entry.version };
    this.entries.push(undefined);
    this.known.push(record);
    if (slot >= this.live.length) this.grow(this.live.length * 2);
    this.hold(slot, entry);
    this.live[slot] = 1;
    this.byAddress.set(id, record);
    return old;
  }

  /**
   * Put `entry`, a newer version of the entry `slot` holds, in its place, where `replace` would
   * give it a new slot: for a version the indexes would derive nothing new from (same text).
   */
  renew(slot: number, entry: Entry): void {
    const known = this.known[slot];
    if (!known || this.entries[slot] === undefined || known.version >= entry.version) throw new Error('renew: not a newer version of the entry the slot holds');
    known.version = entry.version;
    this.hold(slot, entry);
  }

  /**
   * Number slots 0…n-1 after a saved index (an empty table only). They are live but hold no
   * entry until `claim` matches each to the store's head; `dropUnclaimed` kills the rest.
   */
  async restore(ids: readonly string[], versions: readonly number[], pause: () => Promise<void> = async () => {}): Promise<void> {
    this.entries = new Array<Entry | undefined>(ids.length);
    this.known = new Array<Known | undefined>(ids.length);
    this.live = new Uint8Array(Math.max(1024, ids.length * 2)).fill(1, 0, ids.length);
    this.namespaces = new Uint16Array(this.live.length);
    this.expiring = new Uint8Array(this.live.length);
    this.restored = ids;
    // Each slot's namespace is numbered now, before any head claims it: the text index's
    // statistics are per namespace from the start (text-index.ts restore).
    let namespace = '';
    let code = 0;
    for (let slot = 0; slot < ids.length; slot++) {
      const id = ids[slot] as string;
      const record = { slot, version: versions[slot] as number };
      const held = this.byAddress.size;
      this.byAddress.set(id, record);
      if (this.byAddress.size === held) this.restoredTwice = true;
      this.known[slot] = record;
      // Saved slots come namespace by namespace, mostly: the last one's number is reused.
      if (slot === 0 || id.charCodeAt(namespace.length) !== 0 || !id.startsWith(namespace)) {
        namespace = id.slice(0, Math.max(0, id.indexOf('\u0000')));
        code = this.numberOf(namespace);
      }
      this.namespaces[slot] = code;
      if (slot % RESTORE_PAUSE_EVERY === 0) await pause();
    }
  }

  /**
   * The restored slot of `entry` when it holds this very version (`same` compares content),
   * which then serves `entry`; else -1, and a restored slot holding another version is marked
   * older than any, so that `replace` takes the store's head whatever its version. `hint`:
   * the restored slot expected to name it (see restoredAt), looked at before the map.
   */
  claim(entry: Entry, same: (slot: number) => boolean, hint = -1): number {
    const known = this.restoredAt(hint, entry) ? this.known[hint] : this.byAddress.get(idOf(entry));
    if (!known || known.slot < 0 || this.entries[known.slot] !== undefined || this.live[known.slot] !== 1) return -1;
    if (known.version === entry.version && same(known.slot)) {
      this.hold(known.slot, entry);
      return known.slot;
    }
    // Older than anything: `replace` will kill this slot and report it, for the indexes to drop.
    known.version = -1;
    return -1;
  }

  /**
   * Whether restored slot `slot` names `entry`'s address, compared in place: the heads come in
   * the order the saved index numbered them, mostly (both follow the store's scan), and making
   * a million addresses to look each up in the map took 1–2 s of a restart at a million
   * entries (on two busy cores). Never when the saved index names an address twice: the map
   * holds the later slot, `known` both.
   */
  private restoredAt(slot: number, entry: Entry): boolean {
    const id = slot >= 0 && !this.restoredTwice ? this.restored[slot] : undefined;
    if (id === undefined) return false;
    const { namespace, entity_path: path, key } = entry;
    const at = namespace.length + 1 + path.length;
    return (
      id.length === at + 1 + key.length &&
      id.charCodeAt(namespace.length) === 0 &&
      id.charCodeAt(at) === 0 &&
      id.startsWith(namespace) &&
      id.startsWith(path, namespace.length + 1) &&
      id.endsWith(key)
    );
  }

  /** Kill the restored slots no head claimed (entries the store no longer holds); returns them. */
  dropUnclaimed(): number[] {
    const dropped: number[] = [];
    this.restored.forEach((id, slot) => {
      if (this.live[slot] !== 1 || this.entries[slot] !== undefined) return;
      this.kill(slot);
      if (this.byAddress.get(id)?.slot === slot) this.byAddress.delete(id);
      dropped.push(slot);
    });
    this.restored = [];
    return dropped;
  }

  /**
   * Forget every entry `names` picks (by address): their slots die and their addresses are
   * unknown again, so the same address written anew starts over at version 1. Answers the
   * slots killed, each with the entry it held (none for a saved slot not matched yet).
   */
  forget(names: (address: { namespace: string; entity_path: string; key: string }) => boolean): { slot: number; entry: Entry | undefined }[] {
    const killed: { slot: number; entry: Entry | undefined }[] = [];
    for (const [id, known] of this.byAddress) {
      const [namespace = '', entity_path = '', key = ''] = id.split('\u0000');
      if (!names({ namespace, entity_path, key })) continue;
      if (known.slot >= 0 && this.live[known.slot] === 1) {
        killed.push({ slot: known.slot, entry: this.entries[known.slot] });
        this.kill(known.slot);
      }
      this.byAddress.delete(id);
    }
    return killed;
  }

  /** Put `entry` in `slot`, with its namespace number and whether it may expire. */
  private hold(slot: number, entry: Entry): void {
    this.entries[slot] = entry;
    this.namespaces[slot] = this.numberOf(entry.namespace);
    // A tombstone never holds a slot; one would be read as the filter reads it, all the same.
    this.expiring[slot] = entry.expires_at !== null || entry.deleted ? 1 : 0;
  }

  /** A namespace's number, given it now if it has none (0 past MAX_NAMESPACE_CODES). */
  private numberOf(namespace: string): number {
    let code = this.namespaceCodes.get(namespace);
    if (code === undefined) {
      code = this.namespaceCodes.size < MAX_NAMESPACE_CODES ? this.namespaceCodes.size + 1 : 0;
      if (code > 0) this.namespaceCodes.set(namespace, code);
    }
    return code;
  }

  private grow(size: number): void {
    this.live = widened(this.live, size);
    this.namespaces = widened(this.namespaces, size);
    this.expiring = widened(this.expiring, size);
  }

  private kill(slot: number): void {
    this.entries[slot] = undefined;
    this.known[slot] = undefined;
    this.live[slot] = 0;
    this.dead += 1;
  }

  /**
   * Renumber live slots densely when over a quarter are dead; returns old → new (-1 = gone).
   * In place, keeping each array's room: the table holds a request up for as long as this
   * runs, and new slots follow at once (fresh arrays of the live size had to grow again).
   */
  compactIfSparse(): Int32Array | null {
    // Unclaimed restored slots hold no entry yet and would look dead: wait for dropUnclaimed.
    if (this.restored.length > 0 || this.dead < 10_000 || this.dead < this.entries.length / 4) return null;
    const size = this.entries.length;
    const remap = new Int32Array(size).fill(-1);
    const { entries, known, namespaces, expiring } = this;
    let kept = 0;
    // A slot holds an entry exactly while it is live; slots only move down, so none is overwritten before it is read.
    for (let slot = 0; slot < size; slot++) {
      const entry = entries[slot];
      if (entry === undefined) continue;
      remap[slot] = kept;
      entries[kept] = entry;
      // The address's record moves with its slot (a saved index naming an address twice leaves the earlier slot none).
      const record = known[slot];
      if (record !== undefined && record.slot === slot) record.slot = kept;
      known[kept] = record?.slot === kept ? record : undefined;
      namespaces[kept] = namespaces[slot] as number;
      expiring[kept] = expiring[slot] as number;
      kept += 1;
    }
    this.entries.length = kept;
    this.known.length = kept;
    this.live.fill(1, 0, kept).fill(0, kept);
    this.namespaces.fill(0, kept);
    this.expiring.fill(0, kept);
    this.dead = 0;
    this.generation += 1;
    return remap;
  }
}
