import { constants } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { join } from 'node:path';
import { CorruptDataError } from './corrupt-data.ts';
import { decodeOne } from './record-codec.ts';

/** Where a record lives: segment number, byte offset, byte length. */
export interface Location {
  seg: number;
  off: number;
  len: number;
}

/** Segments roll at this size so that no single file grows without bound. */
export const SEGMENT_BYTES = 64 * 1024 * 1024;

// Not O_APPEND: on Linux it ignores the write position, and we must be able to overwrite a
// failed batch's leftovers at the known end of the log. O_DSYNC: a write returns once its data
// (and the size needed to read it) is on disk, what write + fdatasync gave in two trips
// through libuv's thread pool instead of one. O_NOFOLLOW: a symbolic link planted at a segment's
// name is refused (ELOOP), never written through to a file outside the data directory.
const WRITE_FLAGS = constants.O_RDWR | constants.O_DSYNC | constants.O_NOFOLLOW;

export const segmentName = (seg: number): string => `${String(seg).padStart(8, '0')}.log`;
/** A compacted base: the whole store as of a compaction, standing in for every segment below it. */
export const baseName = (seg: number): string => `${String(seg).padStart(8, '0')}.base`;

/** Make a file's creation or rename durable: its directory entry must reach the disk too. */
export const syncDirectory = async (dir: string): Promise<void> => {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
};

interface Pending {
  /** One record, or an atomic group's records: always written together by one flush. */
  records: Buffer[];
  /** Runs synchronously once the records are durable, before anyone can observe the new end. */
  onDurable: (locations: Location[]) => void;
  resolve: (locations: Location[]) => void;
  reject: (error: unknown) => void;
}

/** A request to start a new segment, leaving a number free for a compacted base (rollAround). */
interface Roll {
  capture: () => unknown;
  resolve: (value: { reserved: number; captured: unknown }) => void;
  reject: (error: unknown) => void;
}

/**
 * The append-only log with group commit: records that arrive while a flush is running wait
 * for the next one, and one synchronous (O_DSYNC) write covers the whole batch. A record's
 * promise resolves only after that write, so an acknowledged write survives a crash.
 */
export class SegmentLog {
  private readonly dir: string;
  private handle: FileHandle;
  private seg: number;
  private size: number;
  private pending: Pending[] = [];
  private rolls: Roll[] = [];
  /** The compacted base file's segment number, if there is one; reads of it go to `<n>.base`. */
  private base: number | null = null;
  private flushing = false;
  private broken: Error | null = null;
  private readonly readers = new Map<number, Promise<FileHandle>>();
  private readonly segmentBytes: number;

  private constructor(dir: string, handle: FileHandle, seg: number, size: number, segmentBytes: number, base: number | null) {
    this.dir = dir;
    this.base = base;
    this.segmentBytes = segmentBytes;
    this.handle = handle;
    this.seg = seg;
    this.size = size;
  }

  /** Open segment `seg` for appending at `size` (the end of its last good record). */
  static async open(dir: string, seg: number, size: number, segmentBytes = SEGMENT_BYTES, base: number | null = null): Promise<SegmentLog> {
    const path = join(dir, segmentName(seg));
    // Only a segment still to be written from its start may be created: one that should hold
    // `size` bytes and is not there is missing, and creating it would hide that.
    const handle = await open(path, size === 0 ? WRITE_FLAGS | constants.O_CREAT : WRITE_FLAGS, 0o600).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') throw new CorruptDataError(`segment ${seg} (${path}) is missing: it should hold ${size} bytes`);
      throw error;
    });
    try {
      const { size: onDisk } = await handle.stat();
      // Never extend: truncate past the end would fill the gap with zeros, where records were.
      if (onDisk < size) throw new CorruptDataError(`segment ${seg} (${path}) holds ${onDisk} bytes, fewer than the ${size} it should`);
      // Anything past the last good record is a torn tail the caller chose to drop.
      if (onDisk > size) await handle.truncate(size);
      await handle.datasync();
      await syncDirectory(dir);
    } catch (error) {
      await handle.close();
      throw error;
    }
    return new SegmentLog(dir, handle, seg, size, segmentBytes, base);
  }

  get position(): { seg: number; off: number } {
    return { seg: this.seg, off: this.size };
  }

  get baseSegment(): number | null {
    return this.base;
  }

  /**
   * Between two flushes, start segment `seg + 2`, leaving `seg + 1` (empty) for a compacted base,
   * and run `capture` in the same tick: it sees in-memory state that covers exactly the
   * segments before the new one. Writes wait only for the file to be opened.
   */
  rollAround<T>(capture: () => T): Promise<{ reserved: number; captured: T }> {
    if (this.broken) return Promise.reject(this.broken);
    return new Promise((resolve, reject) => {
      this.rolls.push({ capture, resolve: resolve as Roll['resolve'], reject });
      if (!this.flushing) void this.flush();
    });
  }

  /**
   * The compacted base `seg` is in place: reads of it go to its file, and every older
   * segment and base is deleted (the base holds everything they held that is still wanted).
   */
  adoptBase(seg: number): void {
    const old = this.base;
    this.base = seg;
    const stale = [...this.readers.entries()].filter(([n]) => n < seg || n === old);
    for (const [n] of stale) this.readers.delete(n);
    // Readers already holding a handle finish first; Linux keeps an unlinked file readable.
    setTimeout(() => {
      for (const [, opening] of stale) void opening.then((reader) => reader.close(), () => undefined);
    }, 5_000).unref();
  }

  /**
   * Append `record`; `onDurable` applies it to in-memory state in the same tick that moves
   * the log's end, so a checkpoint never sees a position its index does not cover.
   */
  async append(record: Buffer, onDurable: (location: Location) => void): Promise<Location> {
    const [location] = await this.appendGroup([record], ([at]) => onDurable(at as Location));
    return location as Location;
  }

  /**
   * Append `records` contiguously in one segment, covered by one synchronous write. A group is never
   * split across segments or flushes, so a crash tears at most its end, which recovery
   * (recovery.ts) drops whole when the group's header says more records should follow.
   */
  appendGroup(records: Buffer[], onDurable: (locations: Location[]) => void): Promise<Location[]> {
    if (this.broken) return Promise.reject(this.broken);
    return new Promise((resolve, reject) => {
      this.pending.push({ records, onDurable, resolve, reject });
      if (!this.flushing) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    while ((this.pending.length > 0 || this.rolls.length > 0) && !this.broken) {
      const roll = this.rolls.shift();
      if (roll) {
        try {
          // The reserved number gets an empty segment, so the log has no gap if the base never comes.
          await this.roll();
          await this.roll();
          roll.resolve({ reserved: this.seg - 1, captured: roll.capture() });
        } catch (error) {
          roll.reject(error);
          this.broken = new Error('the data log could not start a new segment; restart the server', { cause: error });
        }
        continue;
      }
      const batch = this.pending;
      this.pending = [];
      try {
        if (this.size > 0 && this.size >= this.segmentBytes) await this.roll();
        const data = Buffer.concat(batch.flatMap((p) => p.records));
        // O_DSYNC: when the write returns, the batch is durable.
        await this.writeAll(data, this.size);
        let off = this.size;
        this.size += data.length;
        for (const p of batch) {
          const locations = p.records.map((record) => {
            const location = { seg: this.seg, off, len: record.length };
            off += record.length;
            return location;
          });
          try {
            p.onDurable(locations);
            p.resolve(locations);
          } catch (error) {
            p.reject(error);
          }
        }
      } catch (error) {
        // Versions queued behind a failed batch may build on it: fail them too.
        for (const p of [...batch, ...this.pending.splice(0)]) p.reject(error);
        await this.forgetFailedBatch(error);
      }
    }
    for (const p of this.pending.splice(0)) p.reject(this.broken);
    for (const r of this.rolls.splice(0)) r.reject(this.broken);
    this.flushing = false;
  }

  /**
   * A batch that failed (disk full, I/O error) may be partly on disk. Cut it off so that its
   * never-acknowledged records cannot be replayed at start; if even that fails, stop taking
   * writes rather than risk it.
   */
  private async forgetFailedBatch(cause: unknown): Promise<void> {
    try {
      await this.handle.truncate(this.size);
    } catch {
      this.broken = new Error('the data log could not be repaired after a failed write; restart the server', { cause });
    }
  }

  private async writeAll(data: Buffer, position: number): Promise<void> {
    let written = 0;
    while (written < data.length) {
      const { bytesWritten } = await this.handle.write(data, written, data.length - written, position + written);
      if (bytesWritten <= 0) throw new Error(`a write to segment ${this.seg} at byte ${position + written} wrote nothing`);
      written += bytesWritten;
    }
  }

  private async roll(): Promise<void> {
    await this.handle.close();
    this.seg += 1;
    this.size = 0;
    this.handle = await open(join(this.dir, segmentName(this.seg)), WRITE_FLAGS | constants.O_CREAT, 0o600);
    await syncDirectory(this.dir);
  }

  /** Read one record back (old versions are not kept in memory). */
  async read(location: Location): Promise<Buffer> {
    // The opening promise is shared, so concurrent first reads of a segment open it once
    // (two opens would leave one handle unclosed).
    let opening = this.readers.get(location.seg);
    if (!opening) {
      opening = open(join(this.dir, location.seg === this.base ? baseName(location.seg) : segmentName(location.seg)), 'r');
      this.readers.set(location.seg, opening);
      opening.catch(() => this.readers.delete(location.seg));
    }
    const reader = await opening;
    const buf = Buffer.allocUnsafe(location.len);
    const { bytesRead } = await reader.read(buf, 0, location.len, location.off);
    if (bytesRead !== location.len) {
      throw new CorruptDataError(`segment ${location.seg} is cut short: the record at byte ${location.off} should hold ${location.len} bytes, the file ${bytesRead} (${this.fileOf(location.seg)})`);
    }
    return buf;
  }

  /**
   * The payload of the record at `location`, read back (old versions, records held by place).
   * Bytes that are not one intact record (a flipped bit, a segment overwritten) are damage,
   * CorruptDataError naming the segment and byte, never served or mistaken for a bug of ours.
   */
  async readDecoded(location: Location): Promise<unknown> {
    const buf = await this.read(location);
    try {
      return decodeOne(buf);
    } catch (error) {
      const reason = error instanceof Error ? error.message.replace(/^unreadable record: /, '') : String(error);
      throw new CorruptDataError(`segment ${location.seg} is damaged at byte ${location.off}: ${reason} (${this.fileOf(location.seg)})`);
    }
  }

  private fileOf(seg: number): string {
    return join(this.dir, seg === this.base ? baseName(seg) : segmentName(seg));
  }

  /** Wait for pending writes, then close every file. */
  async close(): Promise<void> {
    while (this.flushing) await new Promise((r) => setTimeout(r, 1));
    await this.handle.close();
    for (const opening of this.readers.values()) await opening.then((reader) => reader.close(), () => undefined);
    this.readers.clear();
  }
}
