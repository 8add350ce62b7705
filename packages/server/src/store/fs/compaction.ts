import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Entry, EntryAddress } from '../../domain/entry.ts';
import { type EntryIndex, locationOf, moveLocation } from './entry-index.ts';
import { versionRecord } from './apply-version.ts';
import { encodeRecord } from './record-codec.ts';
import { type Held, type RecordTable, isPlaced } from './record-table.ts';
import { type OpenFile, writeAtomically } from './atomic-file.ts';
import { type Location, type SegmentLog, baseName, syncDirectory } from './segment-log.ts';
import { yieldTurns } from '../../event-loop.ts';

export interface CompactionParts {
  dir: string;
  log: SegmentLog;
  index: EntryIndex;
  records: RecordTable;
  /** How the base file is opened (tests pass a wrapper that fills the disk); node's `open` by default. */
  openFile?: OpenFile;
}

interface Captured {
  states: { address: EntryAddress; base: number; locations: (Location | null)[] }[];
  records: [string, string, Held][];
  garbage: number;
}

/** Buffered bytes written to the base per write call. */
const CHUNK_BYTES = 1024 * 1024;
/** Versions copied between yields to the event loop, so requests keep being served. */
const YIELD_EVERY = 500;

/** Bytes of the log, bases and (unless left out) checkpoint in the data directory. */
export const dataBytes = async (dir: string, withCheckpoint = true): Promise<number> => {
  let total = 0;
  for (const name of await readdir(dir)) {
    if (!/\.(log|base)$/.test(name) && !(withCheckpoint && name === 'checkpoint')) continue;
    total += (await stat(join(dir, name)).catch(() => ({ size: 0 }))).size;
  }
  return total;
};

/**
 * Rewrite the log without what forget and retention removed, so those bytes leave the disk.
 *
 * 1. Between two flushes the log starts a new segment, leaving the number before it (an empty
 *    segment) for the base, and the index is captured in that tick: the capture covers exactly
 *    the segments before. Writes go on into the new segment throughout.
 * 2. Every record and version still held is copied into `<n>.base.tmp` (every byte, or the
 *    compaction fails: a short write on a full disk is never taken for the end), synced, read
 *    back and checked against what was written (size and checksum, atomic-file.ts), and renamed
 *    to `<n>.base`: that rename is the commit, and no segment is deleted before it. A crash
 *    before it leaves the old log, whole; after it, start-up takes the newest base and deletes
 *    what it replaced (recovery.ts).
 * 3. The index moves each copied version to its place in the base, unless it changed meanwhile
 *    (dropped, forgotten), then the old segments are deleted.
 */
export const compactLog = async ({ dir, log, index, records, openFile }: CompactionParts): Promise<void> => {
  const { reserved, captured } = await log.rollAround<Captured>(() => ({
    states: [...index.states()].map((s) => ({ address: s.head, base: s.base, locations: [...s.locations] })),
    records: [...records.entries()],
    garbage: records.garbageBytes,
  }));
  const moves: { address: EntryAddress; version: number; from: Location; to: Location }[] = [];
  const recordMoves: { collection: string; id: string; from: Held; to: Location }[] = [];
  await writeAtomically(join(dir, baseName(reserved)), async (file) => {
    let off = 0;
    let parts: Buffer[] = [];
    let buffered = 0;
    const put = async (record: Buffer): Promise<number> => {
      const at = off;
      parts.push(record);
      off += record.length;
      buffered += record.length;
      if (buffered >= CHUNK_BYTES) {
        // Every byte or a failure (a short write on a full disk is not the end of the base).
        await file.write(Buffer.concat(parts, buffered));
        parts = [];
        buffered = 0;
      }
      return at;
    };
    for (const [c, i, held] of captured.records) {
      // A record held by place is copied as the log holds it: the `r` op that wrote it.
      const record = isPlaced(held) ? await log.read(held) : encodeRecord({ t: 'r', c, i, d: held.data, u: held.updated_at });
      recordMoves.push({ collection: c, id: i, from: held, to: { seg: reserved, off: await put(record), len: record.length } });
    }
    let copied = 0;
    for (const { address, base, locations } of captured.states) {
      let first = true;
      for (const [i, from] of locations.entries()) {
        if (!from) continue;
        const version = base + i + 1;
        const { e } = (await log.readDecoded(from)) as { e: Entry };
        const record = encodeRecord(versionRecord(e, first && version > 1));
        first = false;
        const at = await put(record);
        moves.push({ address, version, from, to: { seg: reserved, off: at, len: record.length } });
        if (++copied % YIELD_EVERY === 0) await yieldTurns();
      }
    }
    if (parts.length > 0) await file.write(Buffer.concat(parts, buffered));
    // The base must end where the last copied record does, or it is not committed.
    if (file.size !== off) throw new Error(`the compacted base holds ${file.size} bytes where ${off} were copied`);
  }, { openFile, readBack: true });
  // From here on reads of `reserved` go to the base; then, in the same tick, the index moves.
  const oldBase = log.baseSegment;
  log.adoptBase(reserved);
  for (const { address, version, from, to } of moves) {
    // By version, not by place in the list: a retention drop since the capture moves the base.
    const state = index.get(address);
    const now = state && locationOf(state, version);
    if (state && now && now.seg === from.seg && now.off === from.off) moveLocation(state, version, to);
  }
  for (const { collection, id, from, to } of recordMoves) records.move(collection, id, from, to);
  // What was garbage at the capture is gone with the old segments; what became garbage since is not.
  records.garbageBytes = Math.max(0, records.garbageBytes - captured.garbage);
  for (const name of await readdir(dir)) {
    const n = /^(\d{8})\.(log|base)$/.exec(name);
    if (!n) continue;
    const seg = Number(n[1]);
    if ((n[2] === 'log' && seg <= reserved) || (n[2] === 'base' && seg === oldBase)) await rm(join(dir, name), { force: true });
  }
  await syncDirectory(dir);
};
