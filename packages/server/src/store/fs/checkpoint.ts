import { open, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import type { Entry } from '../../domain/entry.ts';
import { decodeRecords, encodeRecord } from './record-codec.ts';
import { EntryIndex } from './entry-index.ts';
import { type RecordOp, RecordTable } from './record-table.ts';
import { type Location, syncDirectory } from './segment-log.ts';

/**
 * A checkpoint is the index written to disk: every entry's head and version locations, the
 * shared records, and the log position it covers. Start-up loads it and replays only the log after it. The log
 * keeps every version until forget or retention drops some and compaction rewrites it (see
 * compaction.ts), so the checkpoint is what keeps start-up time bounded as the log grows;
 * losing it costs a full replay, never data. It names the compacted base its locations point
 * into: a checkpoint of an older base is stale, and start-up ignores it.
 */
const FILE = 'checkpoint';
const FORMAT = 1;
/**
 * Bytes serialised per write, so a checkpoint never holds the event loop for long: a few
 * milliseconds of JSON (a count of entries would not do: 2,000 entries of 1 KiB values held
 * it for 20–40 ms).
 */
const CHUNK_BYTES = 256 * 1024;

interface Header {
  t: 'checkpoint';
  format: number;
  seg: number;
  off: number;
  count: number;
  /** The compacted base file (segment number) the locations may point into; null: none. */
  base: number | null;
}
type Item = { h: Entry; l: number[] } | { r: RecordOp };

export interface LoadedCheckpoint {
  seg: number;
  off: number;
  base: number | null;
  /** The file's size. */
  bytes: number;
}

/**
 * Capture synchronously (consistent with `position`), then encode and write in chunks in the
 * background: each chunk goes to the file as it is made, so neither the encoding nor one
 * large buffer holds the event loop or doubles the memory of a large index. Resolves to the
 * checkpoint's size in bytes.
 */
export const writeCheckpoint = async (
  dir: string,
  index: EntryIndex,
  records: RecordTable,
  position: { seg: number; off: number },
  base: number | null,
): Promise<number> => {
  const captured: Array<[Entry, (Location | null)[], number]> = [];
  // Copied, since compaction moves locations in place while this is written.
  for (const state of index.states()) captured.push([state.head, [...state.locations], state.head.version]);
  const ops = [...records.ops()];
  const count = captured.length + ops.length;
  const tmp = join(dir, `${FILE}.tmp`);
  const file = await open(tmp, 'w', 0o600);
  let bytes = 0;
  const put = async (parts: Buffer[]): Promise<void> => {
    for (const part of parts) bytes += part.length;
    await file.writev(parts);
  };
  try {
    const first: Buffer[] = [encodeRecord({ t: 'checkpoint', format: FORMAT, ...position, count, base } satisfies Header)];
    for (const op of ops) first.push(encodeRecord({ r: op } satisfies Item));
    await put(first);
    let parts: Buffer[] = [];
    let gathered = 0;
    for (const [head, locations, versions] of captured) {
      const flat: number[] = [];
      // A dropped version is -1 0 0.
      for (const loc of locations.slice(0, versions)) flat.push(loc?.seg ?? -1, loc?.off ?? 0, loc?.len ?? 0);
      const record = encodeRecord({ h: head, l: flat } satisfies Item);
      parts.push(record);
      gathered += record.length;
      if (gathered >= CHUNK_BYTES) {
        await put(parts);
        parts = [];
        gathered = 0;
      }
    }
    await put(parts);
    await put([encodeRecord({ t: 'end', count })]);
    await file.datasync();
  } finally {
    await file.close();
  }
  await rename(tmp, join(dir, FILE));
  await syncDirectory(dir);
  return bytes;
};

/**
 * Load the checkpoint into a new index, or return null (after which the caller replays the
 * whole log) when there is none or it is damaged: a checkpoint is a cache, never the only copy.
 * Entries go into the index as they are decoded, in one pass over the file.
 */
export const loadCheckpoint = async (
  dir: string,
  warn: (msg: string) => void,
): Promise<(LoadedCheckpoint & { index: EntryIndex; records: RecordTable }) | null> => {
  let buf: Buffer;
  try {
    buf = await readFile(join(dir, FILE));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  const index = new EntryIndex();
  const records = new RecordTable();
  let header: Header | null = null;
  let loaded = 0;
  let complete = false;
  for (const rec of decodeRecords(buf)) {
    if (rec.kind !== 'record') break;
    const payload = rec.payload as Header | Item | { t: 'end'; count: number };
    if (!header) {
      if ((payload as Header).t !== 'checkpoint' || (payload as Header).format !== FORMAT) break;
      header = payload as Header;
    } else if ('t' in payload && payload.t === 'end') {
      complete = payload.count === loaded && loaded === header.count;
      break;
    } else if ('r' in payload) {
      records.apply(payload.r);
      loaded += 1;
    } else {
      const { h, l } = payload as { h: Entry; l: number[] };
      const state = index.create(h, Object.freeze(h));
      for (let i = 0; i < l.length; i += 3) {
        state.locations.push(l[i] === -1 ? null : { seg: l[i] as number, off: l[i + 1] as number, len: l[i + 2] as number });
      }
      loaded += 1;
    }
  }
  if (!header || !complete) {
    warn('checkpoint file is damaged or incomplete; rebuilding the index from the full log');
    return null;
  }
  return { index, records, seg: header.seg, off: header.off, base: header.base ?? null, bytes: buf.length };
};
