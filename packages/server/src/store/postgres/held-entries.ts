import type { Entry, EntryAddress } from '../../domain/entry.ts';
import type { ForgetTarget } from '../../ports/store.ts';
import { forgetNames } from '../../domain/forget-target.ts';
import type { Sql } from './client.ts';
import { ENTRY_COLUMNS, rowToEntry, selectEntryColumns } from './entry-row.ts';
import { HEAD_COLUMNS, type HeadPageRow } from './read-entries.ts';

/** A forget target naming every entry at `segment` or below it in `namespace`. */
export interface Segment {
  namespace: string;
  segment: string;
}

const segmentOf = (entityPath: string): string => {
  const slash = entityPath.indexOf('/');
  return slash < 0 ? entityPath : entityPath.slice(0, slash);
};
const segmentKey = (namespace: string, entityPath: string): string => `${namespace}\u0000${segmentOf(entityPath)}`;
const addressKey = (a: EntryAddress): string => `${a.entity_path}\u0000${a.key}`;

/**
 * Which version of each entry this process has handed to its in-process holders (the change
 * feed's announcements, and the heads a scan read, which an in-process search index loads
 * from): for each, the highest version handed out, as the holders keep it (an in-process index
 * keeps the newest version of each entry whatever order versions come in). Grouped by the
 * first segment of the entity path, so a forget drops its entries without a walk of them all,
 * and a check after an absence (WriteFeed.recheck) names what to forget by whole segments: a
 * forget names one segment, whatever its prefix, so the segments to drop are at most as many
 * as the forgets missed.
 *
 * What it costs: an entry of a map per entry handed out (about 100–150 bytes), kept only
 * while something that holds entries listens (WriteFeed.hold).
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
    if (target.key === undefined && !target.prefix.includes('/')) return void this.segments.delete(seg);
    const { namespace } = target;
    for (const key of held.keys()) {
      const cut = key.indexOf('\u0000');
      if (forgetNames(target, { namespace, entity_path: key.slice(0, cut), key: key.slice(cut + 1) })) held.delete(key);
    }
    if (held.size === 0) this.segments.delete(seg);
  }

  /**
   * The segments holding an entry the database does not hold at the version held here (gone,
   * or written afresh since a forget): reads the version and write time of every head, in pages.
   * An entry handed out while this runs may make its segment one of them: a needless rebuild
   * of that segment, never a missed one.
   */
  async stale(sql: Sql, timed: <T>(query: Promise<T>) => Promise<T>): Promise<Segment[]> {
    const matched = new Map<string, number>();
    let after: HeadStamp | undefined;
    for (;;) {
      const page = await timed(readHeadStamps(sql, after, STAMP_PAGE));
      for (const head of page) {
        const seg = segmentKey(head.namespace, head.entity_path);
        const held = this.segments.get(seg)?.get(addressKey(head));
        if (held !== undefined && held === stampOf(head.version, head.written_at.getTime())) matched.set(seg, (matched.get(seg) ?? 0) + 1);
      }
      after = page.at(-1);
      if (page.length < STAMP_PAGE || !after) break;
    }
    const stale: Segment[] = [];
    for (const [seg, held] of this.segments) {
      if ((matched.get(seg) ?? 0) >= held.size) continue;
      const cut = seg.indexOf('\u0000');
      stale.push({ namespace: seg.slice(0, cut), segment: seg.slice(cut + 1) });
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
    // A head without its version row (damage) matches nothing held: its segment is rebuilt.
    rows.map((r) => ({ ...r, written_at: r.written_at ?? new Date(Number.NaN) })),
  );
};

const COLUMNS = selectEntryColumns('v');

/**
 * One page of the heads at or below `segment`, after `after` (entity path and key), each as
 * its version row: what a rebuilt segment is announced again from. `last` is the page's last
 * head, to go on from; a damaged head (no version row) is left out of `entries`, as a holder
 * loading the heads would have nothing of it either.
 */
export const readSegmentHeads = async (
  sql: Sql,
  { namespace, segment }: Segment,
  after: EntryAddress | undefined,
  limit: number,
): Promise<{ entries: Entry[]; last: EntryAddress | undefined; full: boolean }> => {
  const from = after ?? { entity_path: '', key: '' };
  const rows = await sql<HeadPageRow[]>`
    select ${sql.unsafe(HEAD_COLUMNS)}, ${sql.unsafe(COLUMNS)}
      from (select namespace, entity_path, key, version from cairn_heads h
             where h.namespace = ${namespace}
               and (h.entity_path = ${segment} or starts_with(h.entity_path, ${`${segment}/`}))
               and (h.entity_path, h.key) > (${from.entity_path}, ${from.key})
             order by h.entity_path, h.key
             limit ${sql.unsafe(String(Math.trunc(limit)))}) h
      left join lateral (
            select ${sql.unsafe(ENTRY_COLUMNS.join(', '))} from cairn_versions v
             where v.namespace = h.namespace and v.entity_path = h.entity_path
               and v.key = h.key and v.version = h.version
             limit 1) v on true
     order by h.entity_path, h.key`;
  const end = rows.at(-1);
  return {
    entries: rows.filter((r) => r.version !== null).map(rowToEntry),
    last: end && { namespace, entity_path: end.head_entity_path, key: end.head_key },
    full: rows.length >= limit,
  };
};
