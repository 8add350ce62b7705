import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Entry } from '../../domain/entry.ts';
import { CorruptDataError, applyVersion } from './apply-version.ts';
import { loadCheckpoint } from './checkpoint.ts';
import { EntryIndex } from './entry-index.ts';
import { decodeRecords } from './record-codec.ts';
import { type RecordOp, RecordTable } from './record-table.ts';

export interface Recovered {
  index: EntryIndex;
  records: RecordTable;
  /** The segment to keep appending to, and the end of its last good record. */
  seg: number;
  off: number;
  /** Bytes of log replayed after the checkpoint (drives the next checkpoint). */
  replayedBytes: number;
}

const SEGMENT_FILE = /^(\d{8})\.log$/;

const listSegments = async (dir: string): Promise<number[]> =>
  (await readdir(dir))
    .map((name) => SEGMENT_FILE.exec(name)?.[1])
    .filter((n): n is string => n !== undefined)
    .map(Number)
    .sort((a, b) => a - b);

/** `g` heads an atomic batch: the `n` version records right after it count only together. */
type LogRecord = { t: 'v'; e: Entry } | { t: 'g'; n: number } | RecordOp;

interface OpenGroup {
  offset: number;
  left: number;
  versions: { e: Entry; at: { seg: number; off: number; len: number } }[];
}

/**
 * Rebuild the index from the checkpoint plus the log after it. A bad record at the end of
 * the newest segment is a write torn by a crash (never acknowledged: its fsync had not
 * returned) and is dropped with a warning. A bad record anywhere else is damage, and
 * start-up stops rather than serve wrong data.
 */
export const recover = async (dir: string, warn: (msg: string) => void): Promise<Recovered> => {
  const segments = await listSegments(dir);
  const checkpoint = await loadCheckpoint(dir, warn);
  const index = checkpoint?.index ?? new EntryIndex();
  const records = checkpoint?.records ?? new RecordTable();
  const from = checkpoint ?? { seg: segments[0] ?? 1, off: 0 };
  const toReplay = segments.filter((s) => s >= from.seg);
  if (segments.length > 0 && toReplay[0] !== from.seg) {
    throw new CorruptDataError(`segment ${from.seg} named by the checkpoint is missing from ${dir}`);
  }
  let end = { seg: from.seg, off: from.off };
  let replayedBytes = 0;
  let group: OpenGroup | null = null;
  for (const [i, seg] of toReplay.entries()) {
    if (i > 0 && seg !== (toReplay[i - 1] as number) + 1) throw new CorruptDataError(`segment ${seg - 1} is missing from ${dir}`);
    const last = i === toReplay.length - 1;
    const buf = await readFile(join(dir, `${String(seg).padStart(8, '0')}.log`));
    const start = seg === from.seg ? from.off : 0;
    if (start > buf.length) throw new CorruptDataError(`segment ${seg} is shorter than the checkpoint says`);
    for (const rec of decodeRecords(buf, start)) {
      if (rec.kind === 'end' || rec.kind === 'bad') {
        // A batch cut short by the crash was never acknowledged: drop all of it, not the part on disk.
        const cut = group ? group.offset : rec.offset;
        if (rec.kind === 'bad' || group) {
          if (!last) throw new CorruptDataError(`segment ${seg} is damaged at byte ${rec.offset}: ${rec.kind === 'bad' ? rec.reason : 'a batch is cut short'}`);
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
          group.versions.push({ e: payload.e, at });
          if (--group.left === 0) {
            for (const v of group.versions) applyVersion(index, v.e, v.at);
            group = null;
          }
        } else if (payload.t === 'v') applyVersion(index, payload.e, at);
        else if (payload.t === 'r' || payload.t === 'x') records.apply(payload);
        else throw new CorruptDataError(`segment ${seg} holds an unknown record kind at byte ${rec.offset}`);
        replayedBytes += rec.length;
      }
    }
  }
  index.finishBulk();
  return { index, records, ...end, replayedBytes };
};
