import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Entry } from '../../domain/entry.ts';
import { CorruptDataError, applyVersion } from './apply-version.ts';
import { loadCheckpoint, removeCheckpointLeftover } from './checkpoint.ts';
import { EntryIndex } from './entry-index.ts';
import { decodeRecords, followsRecord } from './record-codec.ts';
import { streamRecords } from './record-stream.ts';
import { type RecordOp, RecordTable } from './record-table.ts';
import { BASE_FILE, SEGMENT_FILE } from './store-files.ts';
import { type DropOp, type ForgetOp, applyDrop, applyForget } from './forget-ops.ts';

export interface Recovered {
  index: EntryIndex;
  records: RecordTable;
  /** The segment to keep appending to, and the end of its last good record. */
  seg: number;
  off: number;
  /** Bytes of log replayed after the checkpoint (drives the next checkpoint). */
  replayedBytes: number;
  /** The size of the checkpoint it started from (0: none). */
  checkpointBytes: number;
  /** The compacted base in use (its segment number), if any. */
  base: number | null;
}

const segmentFile = (dir: string, seg: number): string => join(dir, `${String(seg).padStart(8, '0')}.log`);

const numbered = (names: string[], pattern: RegExp): number[] =>
  names
    .map((name) => pattern.exec(name)?.[1])
    .filter((n): n is string => n !== undefined)
    .map(Number)
    .sort((a, b) => a - b);

/**
 * The newest compacted base stands in for every segment and base below it (and the empty segment
 * of its own number, kept while it was being written): those (left by a
 * compaction cut short after its base was in place) and unfinished bases are deleted.
 */
const settleBases = async (dir: string): Promise<{ segments: number[]; base: number | null }> => {
  const names = await readdir(dir);
  const bases = numbered(names, BASE_FILE);
  const base = bases.at(-1) ?? null;
  let segments = numbered(names, SEGMENT_FILE);
  for (const name of names) if (name.endsWith('.base.tmp')) await rm(join(dir, name), { force: true });
  // A checkpoint write cut short (a crash, a full disk) is never loaded: remove what it left.
  await removeCheckpointLeftover(dir);
  if (base !== null) {
    for (const n of bases.slice(0, -1)) await rm(join(dir, `${String(n).padStart(8, '0')}.base`), { force: true });
    for (const n of segments.filter((s) => s <= base)) await rm(join(dir, `${String(n).padStart(8, '0')}.log`), { force: true });
    segments = segments.filter((s) => s > base);
  }
  return { segments, base };
};

/**
 * `g` heads an atomic batch: the `n` version records right after it count only together.
 * `f` forgets entries (ForgetTarget), `d` drops an entry's versions before `b` (retention);
 * `s` on a version marks, in a compacted base, the oldest one kept of its entry.
 */
type LogRecord =
  | { t: 'v'; e: Entry; s?: 1 }
  | { t: 'g'; n: number }
  | ForgetOp
  | DropOp
  | RecordOp;

interface OpenGroup {
  offset: number;
  left: number;
  /** `first`: the version starts a history whose older versions retention dropped (apply-version.ts). */
  versions: { e: Entry; at: { seg: number; off: number; len: number }; first: boolean }[];
}

/**
 * Rebuild the index from the checkpoint plus the log after it. A bad record at the end of
 * the newest segment, with no good record after it, is a write torn by a crash (never
 * acknowledged: its synchronous write had not returned) and is dropped with a warning. A bad
 * record anywhere else (in an older segment, or in the newest one with a good record after
 * it: a flipped bit, not a torn write) is damage, and start-up stops, naming the file and
 * byte, rather than serve wrong data or cut away the acknowledged writes after it. So does a
 * segment the checkpoint (or the compacted base) says should be there and is not.
 */
export const recover = async (dir: string, warn: (msg: string) => void): Promise<Recovered> => {
  const { segments, base } = await settleBases(dir);
  let checkpoint = await loadCheckpoint(dir, warn);
  // A checkpoint written against an older base points into files that are gone.
  if (checkpoint && checkpoint.base !== base) checkpoint = null;
  const index = checkpoint?.index ?? new EntryIndex();
  const records = checkpoint?.records ?? new RecordTable();
  let replayedBytes = 0;
  if (!checkpoint && base !== null) {
    for await (const rec of streamRecords(join(dir, `${String(base).padStart(8, '0')}.base`))) {
      if (rec.kind === 'bad') throw new CorruptDataError(`compacted base ${base} is damaged at byte ${rec.offset}: ${rec.reason}`);
      if (rec.kind === 'end') break;
      const payload = rec.payload as LogRecord;
      if (payload.t === 'v') applyVersion(index, payload.e, { seg: base, off: rec.offset, len: rec.length }, payload.s === 1);
      else if (payload.t === 'r' || payload.t === 'x') records.apply(payload, { seg: base, off: rec.offset, len: rec.length });
      else throw new CorruptDataError(`compacted base ${base} holds an unexpected record at byte ${rec.offset}`);
      replayedBytes += rec.length;
    }
  }
  const from = checkpoint ?? { seg: base !== null ? base + 1 : (segments[0] ?? 1), off: 0 };
  const toReplay = segments.filter((s) => s >= from.seg);
  // Only an empty store (no checkpoint, base or segment) has no segment to start from.
  const empty = !checkpoint && base === null && segments.length === 0;
  if (!empty && toReplay[0] !== from.seg) {
    const namer = checkpoint ? 'the checkpoint' : base !== null ? `compacted base ${base}` : 'the log';
    throw new CorruptDataError(`segment ${from.seg} named by ${namer} is missing from ${dir} (${segmentFile(dir, from.seg)})`);
  }
  let end = { seg: from.seg, off: from.off };
  let group: OpenGroup | null = null;
  for (const [i, seg] of toReplay.entries()) {
    if (i > 0 && seg !== (toReplay[i - 1] as number) + 1) throw new CorruptDataError(`segment ${seg - 1} is missing from ${dir}`);
    const last = i === toReplay.length - 1;
    const path = segmentFile(dir, seg);
    const buf = await readFile(path);
    const start = seg === from.seg ? from.off : 0;
    if (start > buf.length) throw new CorruptDataError(`segment ${seg} (${path}) is shorter than the checkpoint says: ${buf.length} bytes, not ${start}`);
    for (const rec of decodeRecords(buf, start)) {
      if (rec.kind === 'end' || rec.kind === 'bad') {
        // A batch cut short by the crash was never acknowledged: drop all of it, not the part on disk.
        const cut = group ? group.offset : rec.offset;
        if (rec.kind === 'bad' || group) {
          const reason = rec.kind === 'bad' ? rec.reason : 'a batch is cut short';
          if (!last) throw new CorruptDataError(`segment ${seg} is damaged at byte ${rec.offset}: ${reason} (${path})`);
          // A torn write is the log's last bytes: a good record after the bad one means the bad
          // one is damage, and cutting there would destroy the acknowledged writes after it.
          const after = rec.kind === 'bad' ? followsRecord(buf, rec.offset + 1) : null;
          if (after !== null) {
            throw new CorruptDataError(
              `segment ${seg} is damaged at byte ${rec.offset}: ${reason}, with an intact record at byte ${after} after it (${path})`,
            );
          }
          warn(`dropping a torn write at the end of segment ${seg}: ${buf.length - cut} bytes from byte ${cut} (${rec.kind === 'bad' ? rec.reason : 'an incomplete batch'})`);
        }
        end = { seg, off: cut };
        group = null;
      } else {
        const payload = rec.payload as LogRecord;
        const at = { seg, off: rec.offset, len: rec.length };
        if (group && payload.t !== 'v') throw new CorruptDataError(`segment ${seg} interrupts a batch at byte ${rec.offset}`);
        if (payload.t === 'g') group = { offset: rec.offset, left: payload.n, versions: [] };
        else if (payload.t === 'v' && group) {
          group.versions.push({ e: payload.e, at, first: payload.s === 1 });
          if (--group.left === 0) {
            for (const v of group.versions) applyVersion(index, v.e, v.at, v.first);
            group = null;
          }
        } else if (payload.t === 'v') applyVersion(index, payload.e, at, payload.s === 1);
        else if (payload.t === 'r' || payload.t === 'x') records.apply(payload, at);
        else if (payload.t === 'f') applyForget(index, payload);
        else if (payload.t === 'd') applyDrop(index, payload);
        else throw new CorruptDataError(`segment ${seg} holds an unknown record kind at byte ${rec.offset}`);
        replayedBytes += rec.length;
      }
    }
  }
  index.finishBulk();
  return { index, records, ...end, replayedBytes, checkpointBytes: checkpoint?.bytes ?? 0, base };
};
