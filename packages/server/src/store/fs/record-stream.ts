import { open } from 'node:fs/promises';
import { type Decoded, decodeRecords } from './record-codec.ts';

/** Bytes read at a time. */
const CHUNK_BYTES = 8 * 1024 * 1024;
/**
 * Room left before each chunk (at most the chunk's size) for the start of a record the chunk
 * before it cut, so that joining the two copies that start only (a checkpoint block is at most
 * about 180 KB); a longer one is joined by copying the chunk as well.
 */
const HEADROOM = 1024 * 1024;

/**
 * The records of the file at `path` from byte `start`, as decodeRecords gives them (offsets
 * are the file's), read a chunk at a time: the next chunk is read while the caller works
 * through this one's records, and only one chunk is held. Reading the whole file first cost
 * a checkpoint of a million entries (919 MB) 0.6–0.75 s before its first record was parsed,
 * held all of it in memory meanwhile, and failed outright past 2 GiB (Node's limit for
 * readFile): a store whose checkpoint or compacted base grew past that could not start.
 */
export async function* streamRecords(path: string, start = 0, chunkBytes = CHUNK_BYTES): AsyncGenerator<Decoded> {
  const file = await open(path, 'r');
  let next: Promise<{ buf: Buffer; bytes: number; position: number }> | null = null;
  try {
    const headroom = Math.min(HEADROOM, chunkBytes);
    // Two buffers in turn: one read into while the other's records are decoded (a record is
    // parsed into objects of its own, and a cut one is copied on, so nothing is left pointing
    // into a buffer once the next read starts into it). Fresh buffers per chunk made the
    // garbage collector mark the heap more often (external memory counts toward its trigger).
    const buffers = [Buffer.allocUnsafe(headroom + chunkBytes), Buffer.allocUnsafe(headroom + chunkBytes)];
    let turn = 0;
    const read = async (position: number): Promise<{ buf: Buffer; bytes: number; position: number }> => {
      const buf = buffers[turn++ % 2] as Buffer;
      const { bytesRead } = await file.read(buf, headroom, chunkBytes, position);
      return { buf, bytes: bytesRead, position };
    };
    // What the last chunk left of a record it cut, and where in the file that starts.
    let carry: Buffer = Buffer.alloc(0);
    let carryAt = start;
    next = read(start);
    for (;;) {
      const { buf, bytes, position } = await next;
      if (bytes === 0) {
        // The end of the file: the rest is a record cut short, or nothing.
        for (const rec of decodeRecords(carry)) yield { ...rec, offset: carryAt + rec.offset };
        return;
      }
      let view: Buffer;
      if (carry.length === 0) view = buf.subarray(headroom, headroom + bytes);
      else if (carry.length <= headroom) {
        carry.copy(buf, headroom - carry.length);
        view = buf.subarray(headroom - carry.length, headroom + bytes);
      } else view = Buffer.concat([carry, buf.subarray(headroom, headroom + bytes)]);
      // Only now, with the cut record copied out of it, may the other buffer be read into.
      next = read(position + bytes);
      // Records up to the one this chunk's end cuts; that one, and the rest, wait for the next.
      let whole = view.length;
      for (const rec of decodeRecords(view)) {
        if (rec.kind === 'end') break;
        if (rec.kind === 'bad' && rec.cutShort) {
          whole = rec.offset;
          break;
        }
        yield { ...rec, offset: carryAt + rec.offset };
        if (rec.kind === 'bad') return;
      }
      carry = view.subarray(whole);
      carryAt += whole;
    }
  } finally {
    // A caller that stopped early (a bad record, a break) may leave the next chunk's read
    // under way: the handle closes once it is done.
    await next?.catch(() => undefined);
    await file.close();
  }
}
