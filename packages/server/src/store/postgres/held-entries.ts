import type { Entry, EntryAddress } from '../../domain/entry.ts';
import type { ForgetTarget } from '../../ports/store.ts';
import { forgetNames } from '../../domain/forget-target.ts';
import type { Sql } from './client.ts';
import { ENTRY_COLUMNS, rowToEntry, selectEntryColumns, textArrayLiteral } from './entry-row.ts';
import { HEAD_COLUMNS, type HeadPageRow } from './read-entries.ts';

/** An entry held here, at the version (and write time) held: `<version>@<ms>`. */
export interface HeldVersion extends EntryAddress {
  stamp: string;
}

const segmentOf = (entityPath: string): string => {
  const slash = entityPath.indexOf('/');
  return slash < 0 ? entityPath : entityPath.slice(0, slash);
};
const segmentKey = (namespace: string, entityPath: string): string => `${namespace}\u0000${segmentOf(entityPath)}`;
const addressKey = (a: Pick<EntryAddress, 'entity_path' | 'key'>): string => `${a.entity_path}\u0000${a.key}`;

/**
 * Which version of each entry this process has handed to its in-process holders (the change
 * feed's announcements, and the heads a scan read, which an in-process search index loads
 * from): for each, the highest version handed out, as the holders keep it (an in-process index
 * keeps the newest version of each entry whatever order versions come in). Grouped by the
 * first segment of the entity path, so a forget of a whole segment drops its entries without a
 * walk of them all, and a forget of one key drops it directly (a forget of a deeper prefix
 * walks its segment's entries).
 *
 * A check after an absence (WriteFeed.recheck) finds with it the entries whose held version
 * the database no longer has (stale): each was forgotten, by a forget this process never
 * heard, and only those are forgotten here.
 *
 * What it costs: an entry of a map per entry held, about 200 bytes with 30-character paths
 * (measured: ~207 bytes an entry at 200,000 entries), kept only while something that holds
 * entries listens (WriteFeed.hold).
 */
export class HeldEntries {
  /** Per segment, per address, the version held and its write time: `<version>@<ms>`. */
  private readonly segments = new Map<string, Map<string, string>>();

  hold(entry: Entry): void {
    const seg = segmentKey(entry.namespace, entry.entity_path);
    let held = this.segments.get(seg);
    if (!held) this.segments.set(seg, (held = new Map()));
    const key = addressKey(entry);
    const before = held.get(key);
    // An equal version is not taken either: holders keep the one they have (a forgotten entry
    // written afresh up to the same version then differs from the database's, and is found).
    if (before !== undefined && Number.parseInt(before, 10) >= entry.version) return;
    held.set(key, stampOf(entry.version, Date.parse(entry.written_at)));
  }

  /** A forget heard or made: what it names is held no more. */
  drop(target: ForgetTarget): void {
    const seg = segmentKey(target.namespace, target.prefix);
    const held = this.segments.get(seg);
    if (!held) return;
    if (target.key !== undefined) held.delete(addressKey({ entity_path: target.prefix, key: target.key }));
    else if (!target.prefix.includes('/')) return void this.segments.delete(seg);
    else {
      const { namespace } = target;
      for (const key of held.keys()) {
        const cut = key.indexOf('\u0000');
        if (forgetNames(target, { namespace, entity_path: key.slice(0, cut), key: key.slice(cut + 1) })) held.delete(key);
      }
    }
    if (held.size === 0) this.segments.delete(seg);
  }

  /** Whether `entry` is still held at `stamp` (not dropped since, nor replaced by a newer version). */
  holds(entry: HeldVersion): boolean {
    return this.segments.get(segmentKey(entry.namespace, entry.entity_path))?.get(addressKey(entry)) === entry.stamp;
  }

  /**
   * The entries held at a version the database no longer stores (that address, version and
   * write time gone from cairn_versions): each was forgotten since it was handed out (and maybe
   * written afresh). A head merely newer than the version held is an ordinary write, whose
   * notification delivers it: never one of them.
   *
   * Cheap first: every head's version and write time is read, in pages, and compared with what
   * is held; only an entry whose head differs, or held in a segment where some held entry had
   * no head at all (every held entry of such a segment), is looked up in cairn_versions, in
   * batches. An entry handed out while this runs may be looked up needlessly, never missed.
   */
  async stale(sql: Sql, timed: <T>(query: Promise<T>) => Promise<T>): Promise<HeldVersion[]> {
    /** Per segment, how many held entries have a head. */
    const present = new Map<string, number>();
    const differing: HeldVersion[] = [];
    let after: HeadStamp | undefined;
    for (;;) {
      const page = await timed(readHeadStamps(sql, after, STAMP_PAGE));
      for (const head of page) {
        const seg = segmentKey(head.namespace, head.entity_path);
        const held = this.segments.get(seg)?.get(addressKey(head));
        if (held === undefined) continue;
        present.set(seg, (present.get(seg) ?? 0) + 1);
        if (held !== stampOf(head.version, head.written_at.getTime())) differing.push({ namespace: head.namespace, entity_path: head.entity_path, key: head.key, stamp: held });
      }
      after = page.at(-1);
      if (page.length < STAMP_PAGE || !after) break;
    }
    const candidates = new Map<string, HeldVersion>();
    for (const entry of differing) candidates.set(`${entry.namespace}\u0000${addressKey(entry)}`, entry);
    for (const [seg, held] of this.segments) {
      if ((present.get(seg) ?? 0) >= held.size) continue;
      const namespace = seg.slice(0, seg.indexOf('\u0000'));
      for (const [key, stamp] of held) {
        const cut = key.indexOf('\u0000');
        candidates.set(`${namespace}\u0000${key}`, { namespace, entity_path: key.slice(0, cut), key: key.slice(cut + 1), stamp });
      }
    }
    const stale: HeldVersion[] = [];
    const all = [...candidates.values()];
    for (let i = 0; i < all.length; i += CHECK_BATCH) {
      const batch = all.slice(i, i + CHECK_BATCH);
      const stored = await timed(readVersionStamps(sql, batch));
      batch.forEach((entry, at) => {
        if (stored[at] !== entry.stamp) stale.push(entry);
      });
    }
    return stale;
  }

  /** How many entries are held, over how many segments (for the log). */
  get size(): { entries: number; segments: number } {
    let entries = 0;
    for (const held of this.segments.values()) entries += held.size;
    return { entries, segments: this.segments.size };
  }
}

const STAMP_PAGE = 5000;
/** Held versions looked up in cairn_versions per statement. */
const CHECK_BATCH = 1000;
const stampOf = (version: number, writtenMs: number): string => `${version}@${writtenMs}`;

interface HeadStamp {
  namespace: string;
  entity_path: string;
  key: string;
  version: number;
  written_at: Date;
}

/** One page of heads, in primary key order after `after`: their addresses, versions and write times. */
const readHeadStamps = async (sql: Sql, after: EntryAddress | undefined, limit: number): Promise<HeadStamp[]> => {
  const from = after ?? { namespace: '', entity_path: '', key: '' };
  return sql<HeadStamp[]>`
    select h.namespace, h.entity_path, h.key, h.version, v.written_at
      from (select namespace, entity_path, key, version from cairn_heads h
             where (h.namespace, h.entity_path, h.key) > (${from.namespace}, ${from.entity_path}, ${from.key})
             order by h.namespace, h.entity_path, h.key
             limit ${sql.unsafe(String(Math.trunc(limit)))}) h
      left join cairn_versions v
        on v.namespace = h.namespace and v.entity_path = h.entity_path and v.key = h.key and v.version = h.version
     order by h.namespace, h.entity_path, h.key`.then((rows) =>
    // A head without its version row (damage) matches nothing held: the version held is looked up.
    rows.map((r) => ({ ...r, written_at: r.written_at ?? new Date(Number.NaN) })),
  );
};

/**
 * For each held version, the stamp of the row cairn_versions holds at its address and version
 * (undefined when none): one walk of the versions primary key per entry.
 */
const readVersionStamps = async (sql: Sql, held: readonly HeldVersion[]): Promise<(string | undefined)[]> => {
  const rows = await sql<{ i: string; version: number; written_at: Date }[]>`
    select a.i, v.version, v.written_at
      from unnest(${textArrayLiteral(held.map((h) => h.namespace))}::text[],
                  ${textArrayLiteral(held.map((h) => h.entity_path))}::text[],
                  ${textArrayLiteral(held.map((h) => h.key))}::text[],
                  ${`{${held.map((h) => Number.parseInt(h.stamp, 10)).join(',')}}`}::int8[]) with ordinality as a(namespace, entity_path, key, version, i)
      join cairn_versions v
        on v.namespace = a.namespace and v.entity_path = a.entity_path and v.key = a.key and v.version = a.version`;
  const found: (string | undefined)[] = held.map(() => undefined);
  for (const row of rows) found[Number(row.i) - 1] = stampOf(row.version, row.written_at.getTime());
  return found;
};

const COLUMNS = selectEntryColumns('v');

/**
 * The heads of `addresses` (of any namespaces), each as its version row: what an entry found
 * forgotten is announced again from, when it was written afresh since. An address without a
 * head, or whose head lacks its version row (damage), has none: a holder loading the heads
 * would have nothing of it either.
 */
export const readHeadsOf = async (sql: Sql, addresses: readonly EntryAddress[]): Promise<Entry[]> => {
  const rows = await sql<HeadPageRow[]>`
    select ${sql.unsafe(HEAD_COLUMNS)}, ${sql.unsafe(COLUMNS)}
      from unnest(${textArrayLiteral(addresses.map((a) => a.namespace))}::text[],
                  ${textArrayLiteral(addresses.map((a) => a.entity_path))}::text[],
                  ${textArrayLiteral(addresses.map((a) => a.key))}::text[]) as a(namespace, entity_path, key)
      join cairn_heads h on h.namespace = a.namespace and h.entity_path = a.entity_path and h.key = a.key
      left join lateral (
            select ${sql.unsafe(ENTRY_COLUMNS.join(', '))} from cairn_versions v
             where v.namespace = h.namespace and v.entity_path = h.entity_path
               and v.key = h.key and v.version = h.version
             limit 1) v on true`;
  return rows.filter((r) => r.version !== null).map(rowToEntry);
};
