import { rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Entry } from '../../domain/entry.ts';
import { MAX_PAYLOAD, encodeJson, encodeRecord } from './record-codec.ts';
import { streamRecords } from './record-stream.ts';
import { EntryIndex, foldDropped } from './entry-index.ts';
import { type PlacedOp, type RecordOp, RecordTable } from './record-table.ts';
import type { Location } from './segment-log.ts';
import { writeAtomically } from './atomic-file.ts';

/**
 * A checkpoint is the index written to disk: every entry's head and version locations, the
 * shared records, and the log position it covers. Start-up loads it and replays only the log after it. The log
 * keeps every version until forget or retention drops some and compaction rewrites it (see
 * compaction.ts), so the checkpoint is what keeps start-up time bounded as the log grows;
 * losing it costs a full replay, never data. It names the compacted base its locations point
 * into: a checkpoint of an older base is stale, and start-up ignores it.
 */
const FILE = 'checkpoint';

/**
 * Remove a checkpoint.tmp an interrupted write left (a crash, or a full disk before it could
 * be removed): start-up calls it, so no partial file lingers in the data directory.
 */
export const removeCheckpointLeftover = (dir: string): Promise<void> => rm(join(dir, `${FILE}.tmp`), { force: true });
/**
 * Format 2 writes blocks: each record after the header holds many entries (or record ops), so
 * a load checks, decodes and parses one record per block rather than per entry. Format 3 is
 * format 2 whose record blocks may also name a large record by its place in the log (`l`
 * ops, see INLINE_BYTES); a release that reads only format 2 would take those for records
 * without data, so the number changed and such a release replays the log instead. Format 4 is
 * format 3 whose entries' flat locations begin with the entry's base (the count of oldest
 * versions it no longer holds, see EntryState) instead of a -1 0 0 per such version: a history
 * whose first kept version is in the millions was millions of triplets, past the record bound.
 * An earlier release would take the base for a segment, so the number changed. Formats 1 (one
 * record per entry), 2 and 3 are still read, their leading dropped versions counted into the
 * base, so a data directory of an earlier release starts from its checkpoint; the next one
 * written is format 4.
 */
const FORMAT = 4;
const BLOCK_FORMATS = new Set([2, 3, 4]);
const FORMAT_1 = 1;
/** The first format whose flat locations begin with the entry's base. */
const BASE_FORMAT = 4;
/**
 * A block's JSON text, at most, in UTF-16 code units (bytes for ASCII, at most 3 bytes each
 * otherwise); a larger item is a block alone. At load the block is one string: at 60 Ki units
 * it stays below V8's large-object size (128 KiB) even as a two-byte string, where a 256 KiB
 * string costs a fresh mapping of its own (at 1M entries, 0.44 s of Buffer toString instead
 * of 0.04 s). Each block is one write and one JSON.parse of well under a millisecond, so
 * neither holds the event loop (a count of entries would not do: 2,000 entries of 1 KiB
 * values held it for 20–40 ms). Far below MAX_PAYLOAD: only an item that passes that bound
 * alone can make a block too large to load.
 */
const BLOCK_CHARS = 60 * 1024;

interface Header {
  t: 'checkpoint';
  format: number;
  seg: number;
  off: number;
  count: number;
  /** The compacted base file (segment number) the locations may point into; null: none. */
  base: number | null;
  /** The shared records' garbage bytes (RecordTable.garbageBytes); absent before it was kept. */
  garbage?: number;
}
interface End {
  t: 'end';
  /** Entries plus record ops, as in the header: a file cut short anywhere fails one check. */
  count: number;
}
/**
 * Format 2, 3 and 4's blocks. `e`: each entry's head, then its versions' locations flat (seg off
 * len each; a dropped version is -1 0 0; from format 4, after the entry's base), so an entry
 * costs no object beyond its head and one array. `r`: the shared records, as the ops that
 * recreate them or (format 3 on) their places.
 */
type Block = { e: Array<Entry | number[]> } | { r: Array<RecordOp | PlacedOp> };
/** Format 1's records, one per entry or record op. */
type Item = { h: Entry; l: number[] } | { r: RecordOp };

export interface LoadedCheckpoint {
  seg: number;
  off: number;
  base: number | null;
  /** The file's size. */
  bytes: number;
}

/**
 * Capture synchronously (consistent with `position`), then encode and write block by block in
 * the background: each block goes to the file as it is made, so neither the encoding nor one
 * large buffer holds the event loop or doubles the memory of a large index. Resolves to the
 * checkpoint's size in bytes. Fails (the log still holds everything) rather than write an item
 * past the record bound, which the loader would refuse.
 */
export const writeCheckpoint = async (
  dir: string,
  index: EntryIndex,
  records: RecordTable,
  position: { seg: number; off: number },
  base: number | null,
): Promise<number> => {
  const captured: Array<[Entry, number, (Location | null)[], number]> = [];
  // Copied, since compaction moves locations in place while this is written.
  for (const state of index.states()) captured.push([state.head, state.base, [...state.locations], state.head.version]);
  const ops = [...records.ops()];
  const garbage = records.garbageBytes;
  const count = captured.length + ops.length;
  let bytes = 0;
  // Written to checkpoint.tmp and renamed over the checkpoint once whole and checked; a
  // failure (a full disk) removes checkpoint.tmp (atomic-file.ts).
  await writeAtomically(join(dir, FILE), async (file) => {
    const put = async (record: Buffer): Promise<void> => {
      bytes += record.length;
      await file.write(record);
    };
    // The block being gathered: its kind and its items' JSON text.
    let kind = '';
    let items: string[] = [];
    let chars = 0;
    const flush = async (): Promise<void> => {
      if (items.length === 0) return;
      const record = encodeJson(`{"${kind}":[${items.join(',')}]}`);
      const length = record.readUInt32LE(0);
      if (length > MAX_PAYLOAD) throw new Error(`a checkpoint item of ${length} bytes passes the record bound of ${MAX_PAYLOAD}`);
      items = [];
      chars = 0;
      await put(record);
    };
    const add = async (k: 'e' | 'r', item: string): Promise<void> => {
      if (k !== kind || chars + item.length > BLOCK_CHARS) await flush();
      kind = k;
      items.push(item);
      chars += item.length;
    };
    await put(encodeRecord({ t: 'checkpoint', format: FORMAT, ...position, count, base, garbage } satisfies Header));
    for (const op of ops) await add('r', JSON.stringify(op));
    // (An entry's base, the versions it does not hold, is no compacted base file.)
    for (const [head, entryBase, locations, versions] of captured) {
      const flat: number[] = [entryBase];
      for (const loc of locations.slice(0, versions - entryBase)) flat.push(loc?.seg ?? -1, loc?.off ?? 0, loc?.len ?? 0);
      // The head and its locations: two items of the block's array, never split between blocks.
      await add('e', `${JSON.stringify(head)},${JSON.stringify(flat)}`);
    }
    await flush();
    await put(encodeRecord({ t: 'end', count } satisfies End));
  });
  return bytes;
};

/**
 * Put one entry into `index`: its head, and its versions' locations from their flat form
 * (`withBase`: format 4's, the base first). An older format's leading dropped versions are
 * counted into the base, as an entry of this release holds them.
 */
const addEntry = (index: EntryIndex, head: Entry, flat: number[], withBase: boolean): void => {
  const base = withBase ? flat[0] : 0;
  if (!Number.isSafeInteger(base) || (base as number) < 0) throw new Error(`the locations of ${head.entity_path} / ${head.key} do not begin with a count`);
  const state = index.create(head, head, base as number);
  for (let i = withBase ? 1 : 0; i < flat.length; i += 3) {
    state.locations.push(flat[i] === -1 ? null : { seg: flat[i] as number, off: flat[i + 1] as number, len: flat[i + 2] as number });
  }
  if (!withBase) foldDropped(state);
};

/** Load one block (format 2 on); returns how many entries and record ops it held. */
const loadBlock = (index: EntryIndex, records: RecordTable, block: Block, withBase: boolean): number => {
  if ('r' in block) {
    for (const op of block.r) records.apply(op);
    return block.r.length;
  }
  const { e } = block;
  for (let i = 0; i < e.length; i += 2) addEntry(index, e[i] as Entry, e[i + 1] as number[], withBase);
  return e.length / 2;
};

/** Load one format 1 record: an entry or a record op. */
const loadItem = (index: EntryIndex, records: RecordTable, item: Item): number => {
  if ('r' in item) records.apply(item.r);
  else addEntry(index, item.h, item.l, false);
  return 1;
};

/**
 * Load the checkpoint into a new index, or return null (after which the caller replays the
 * whole log) when there is none or it is damaged, cut short or of an unknown format: a
 * checkpoint is a cache, never the only copy. Entries go into the index as they are decoded,
 * in one pass over the file.
 */
export const loadCheckpoint = async (
  dir: string,
  warn: (msg: string) => void,
): Promise<(LoadedCheckpoint & { index: EntryIndex; records: RecordTable }) | null> => {
  const path = join(dir, FILE);
  let bytes: number;
  try {
    bytes = (await stat(path)).size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  const index = new EntryIndex();
  const records = new RecordTable();
  let header: Header | null = null;
  let loaded = 0;
  let complete = false;
  let problem = '';
  try {
    // A generator step per record costs little once a record is a block of entries.
    for await (const rec of streamRecords(path)) {
      if (rec.kind !== 'record') break;
      const payload = rec.payload as Header | End | Block | Item;
      if (!header) {
        const first = payload as Header;
        if (first.t !== 'checkpoint' || (!BLOCK_FORMATS.has(first.format) && first.format !== FORMAT_1)) break;
        header = first;
      } else if ('t' in payload && payload.t === 'end') {
        complete = payload.count === loaded && loaded === header.count;
        break;
      } else {
        loaded +=
          header.format === FORMAT_1
            ? loadItem(index, records, payload as Item)
            : loadBlock(index, records, payload as Block, header.format >= BASE_FORMAT);
      }
    }
  } catch (error) {
    // A record that checks out but is not what this code wrote: a cache can be rebuilt.
    problem = ` (${(error as Error).message})`;
  }
  if (!header || !complete) {
    warn(`checkpoint file is damaged or incomplete${problem}; rebuilding the index from the full log`);
    return null;
  }
  records.garbageBytes = header.garbage ?? 0;
  return { index, records, seg: header.seg, off: header.off, base: header.base ?? null, bytes };
};
