import { crc32 } from 'node:zlib';
import { yieldTurns } from '../event-loop.ts';

/** Bytes a writer gathers before handing them on: small enough to stay cheap, large enough for few writes. */
const CHUNK_BYTES = 1 << 20;

/**
 * Encodes numbers and strings into chunks handed to `sink` as they fill, with a running
 * CRC-32 over everything written, so a large index streams to disk in slices instead of
 * being built as one buffer (which would double its memory at save time).
 */
export class ByteWriter {
  private buf = Buffer.allocUnsafe(CHUNK_BYTES);
  private at = 0;
  private crc = 0;
  /** Filled chunks (and large byte runs) waiting for the next flush, in order. */
  private pending: Buffer[] = [];
  private readonly sink: (chunk: Buffer) => Promise<void>;

  constructor(sink: (chunk: Buffer) => Promise<void>) {
    this.sink = sink;
  }

  varint(n: number): void {
    this.room(10);
    // Seven bits a byte; numbers here are non-negative integers below 2^53.
    while (n >= 0x80) {
      this.buf[this.at++] = (n % 0x80) | 0x80;
      n = Math.floor(n / 0x80);
    }
    this.buf[this.at++] = n;
  }

  f32(x: number): void {
    this.room(4);
    this.at = this.buf.writeFloatLE(x, this.at);
  }

  str(s: string): void {
    const length = Buffer.byteLength(s, 'utf8');
    this.varint(length);
    if (length > CHUNK_BYTES / 2) {
      this.bytes(Buffer.from(s, 'utf8'));
      return;
    }
    // Encoded in place: a save writes a string per document and per term, and a buffer
    // of its own for each would be garbage for the collector to pause on.
    this.room(length);
    this.at += this.buf.write(s, this.at, 'utf8');
  }

  bytes(bytes: Uint8Array): void {
    if (bytes.length > CHUNK_BYTES / 2) {
      this.seal();
      this.pending.push(Buffer.from(bytes));
      return;
    }
    this.room(bytes.length);
    this.buf.set(bytes, this.at);
    this.at += bytes.length;
  }

  /** Hand on what is gathered once a chunk is full; call between items, and await it. */
  async flushIfFull(): Promise<void> {
    if (this.at >= CHUNK_BYTES / 2 || this.pending.length > 0) await this.flush();
  }

  /** Hand on everything, then the CRC-32 of all bytes before it (4 bytes, little-endian). */
  async finish(): Promise<void> {
    await this.flush();
    const tail = Buffer.alloc(4);
    tail.writeUInt32LE(this.crc >>> 0);
    await this.sink(tail);
  }

  private async flush(): Promise<void> {
    this.seal();
    const parts = this.pending;
    this.pending = [];
    for (const part of parts) {
      if (part.length === 0) continue;
      this.crc = crc32(part, this.crc);
      await this.sink(part);
    }
  }

  private room(n: number): void {
    if (this.at + n > this.buf.length) this.seal();
  }

  /** Queue the current chunk and start a fresh one (no copy: the old buffer is handed on). */
  private seal(): void {
    if (this.at > 0) this.pending.push(this.buf.subarray(0, this.at));
    this.buf = Buffer.allocUnsafe(CHUNK_BYTES);
    this.at = 0;
  }
}

/** Bytes checksummed between two pauses when checking a file (a few milliseconds' work). */
const CHECK_SLICE_BYTES = 16 << 20;

/**
 * How long background work (a save of the index, its restore, the writes heard while it
 * loaded, a decode on the main thread) holds the event loop between requests. A request takes
 * several turns of the loop (its body, a write's sync, the answer), each waiting out a slice:
 * with 20 ms slices a write arriving as a million entries were restored waited over a second.
 */
export const SLICE_MS = 4;

/**
 * A pause that yields to the event loop once `sliceMs` have passed since the last yield, so
 * a long piece of work runs in slices between requests, at the cost of one clock read per call.
 */
export const slicer = (sliceMs = SLICE_MS): (() => Promise<void>) => {
  let since = performance.now();
  return async () => {
    if (performance.now() - since < sliceMs) return;
    await yieldTurns();
    since = performance.now();
  };
};

/** Reads what ByteWriter wrote; throws on reading past the end (a truncated file). */
export class ByteReader {
  at = 0;
  private readonly buf: Buffer;

  constructor(buf: Buffer) {
    this.buf = buf;
  }

  /**
   * Whether the last 4 bytes are the CRC-32 of the rest; the reader then stops before them.
   * Checked in slices with `pause` between them, so a file of hundreds of megabytes does not
   * hold the event loop for the whole check.
   */
  static async checked(buf: Buffer, pause: () => Promise<void> = async () => {}): Promise<ByteReader | null> {
    if (buf.length < 4) return null;
    const body = buf.subarray(0, buf.length - 4);
    let crc = 0;
    for (let at = 0; at < body.length; at += CHECK_SLICE_BYTES) {
      crc = crc32(body.subarray(at, at + CHECK_SLICE_BYTES), crc);
      await pause();
    }
    return crc >>> 0 === buf.readUInt32LE(buf.length - 4) ? new ByteReader(body) : null;
  }

  /** Bytes left to read. */
  get remaining(): number {
    return this.buf.length - this.at;
  }

  get done(): boolean {
    return this.at >= this.buf.length;
  }

  varint(): number {
    let n = 0;
    let scale = 1;
    for (;;) {
      const byte = this.buf[this.at++];
      if (byte === undefined) throw new RangeError('read past the end');
      n += (byte & 0x7f) * scale;
      if (byte < 0x80) return n;
      scale *= 0x80;
    }
  }

  f32(): number {
    const x = this.buf.readFloatLE(this.at);
    this.at += 4;
    return x;
  }

  str(): string {
    const length = this.varint();
    return this.buf.toString('utf8', this.at, (this.at += length));
  }

  /** Copy the next `length` bytes into `target` at `offset` (no intermediate object). */
  copyTo(target: Uint8Array, offset: number, length: number): void {
    if (this.at + length > this.buf.length) throw new RangeError('read past the end');
    this.buf.copy(target, offset, this.at, (this.at += length));
  }

  /** `length` bytes, a view (no copy): the caller copies what it keeps. */
  bytes(length: number): Buffer {
    if (this.at + length > this.buf.length) throw new RangeError('read past the end');
    return this.buf.subarray(this.at, (this.at += length));
  }
}
