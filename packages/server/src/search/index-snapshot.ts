import { crc32 } from 'node:zlib';
import type { Entry } from '../domain/entry.ts';
import { ANALYSIS_VERSION } from '../search-rules/analyzer.ts';
import { ByteReader, type ByteWriter, slicer } from './byte-codec.ts';
import { grownCapacity } from './capacity.ts';
import { CoarseQuantizer } from './coarse-quantizer.ts';
import { readSavedLists } from './read-saved-lists.ts';

/**
 * The in-process index as a file, so a restart loads it instead of analysing and embedding
 * every entry again. It names each document by address, version and a stamp of its content,
 * and start-up keeps a document only where the store's current head is that very version: a
 * stale file (older than the store, or newer writes lost to a crash) costs re-indexing the
 * entries that differ, never a wrong answer. A torn file fails its CRC and is ignored whole;
 * of one whose terms another analysis made (its header's `analysis`, ANALYSIS_VERSION) only
 * the terms are ignored: each kept entry's text is analysed again, its vector kept.
 */
const MAGIC = 'cairn-search-index';
/**
 * 4: the vectors in one block after the documents (read with one copy), and the inverted
 * lists saved row for row (adopted at start, not quantized again). 5: the same layout with
 * the header's `analysis`; raised so that a server of before it, which reads no `analysis`,
 * rebuilds rather than searches terms it does not make (after a downgrade, or in a fleet of
 * both sharing one saved index). Format 4 files are still read, as of the first analysis.
 */
const FORMAT = 5;
const READABLE_FORMATS: ReadonlySet<number> = new Set([4, 5]);

export type { SnapshotFile } from '../ports/search-index.ts';

export const addressOf = (e: Entry): string => `${e.namespace}\u0000${e.entity_path}\u0000${e.key}`;

/**
 * Two versions with the same number but different content (a lost, rewritten write) differ
 * here: everything the index derives from an entry (value, tags) and when it was written.
 * Filters read the store's entry itself, so its other fields need no stamp.
 */
export const stampOf = (e: Entry): number => crc32(`${e.written_at} ${e.content_hash} ${e.deleted} ${e.tags.join('\u0001')}`) >>> 0;

export interface SnapshotDoc {
  entry: Entry;
  length: number;
  vector: Float32Array | null;
}

export interface SnapshotSource {
  embedder: string | null;
  dimension: number;
  /** Live documents in the order they are numbered in the file (0, 1, …), `count` of them; walked twice. */
  docs: () => Iterable<SnapshotDoc>;
  count: number;
  /** Each term's postings, (slot, frequency) pairs with slots numbered as in `docs` (ascending). */
  postings: Iterable<[string, Int32Array]>;
  /** Captured with `docs`' numbering; null while the vectors are scanned exactly (untrained). */
  filing: SavedFiling | null;
  /** Checked between chunks: false abandons the write (the index was renumbered meanwhile). */
  stillValid: () => boolean;
}

/** One inverted list's rows: slots numbered as in `docs`, their int8 codes (`dimension` each) and scales. */
export interface SavedList {
  slots: Int32Array;
  codes: Int8Array;
  scales: Float32Array;
}

/** The inverted file's centroids (coarse-quantizer.ts) and its `c1 × c2` lists, `rows` rows in all. */
export interface SavedFiling<L extends Iterable<SavedList> = Iterable<SavedList>> {
  c1: number;
  c2: number;
  top: Float32Array;
  second: Float32Array[];
  rows: number;
  lists: L;
}

const bytesOf = (v: Float32Array | Int32Array | Int8Array): Uint8Array => new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
/** Copies of the next `items` items into the start of `out`, aligned for typed reads (a view into the file's buffer may not be). */
const readInto = <T extends Float32Array | Int32Array | Int8Array>(r: ByteReader, out: T, items = out.length): T => {
  r.copyTo(new Uint8Array(out.buffer), 0, items * out.BYTES_PER_ELEMENT);
  return out;
};

export class SnapshotAbandoned extends Error {}

/**
 * Write the snapshot item by item, yielding to the event loop every SLICE_MS (`pause`; a chunk
 * handed to the file yields too, but encoding a chunk's worth of postings takes tens of ms)
 * and checking after every yield that the index was not renumbered meanwhile.
 */
export const writeSnapshot = async (w: ByteWriter, source: SnapshotSource, pause: () => Promise<void> = slicer()): Promise<void> => {
  const check = async (): Promise<void> => {
    await w.flushIfFull();
    await pause();
    if (!source.stillValid()) throw new SnapshotAbandoned('the index was renumbered while saving');
  };
  const dim = source.dimension;
  w.str(JSON.stringify({ magic: MAGIC, format: FORMAT, analysis: ANALYSIS_VERSION, embedder: source.embedder, dimension: dim, count: source.count }));
  for (const { entry, length, vector } of source.docs()) {
    w.str(addressOf(entry));
    w.varint(entry.version);
    w.varint(stampOf(entry));
    w.f32(length);
    await check();
  }
  w.str('');
  // Every document's vector (zeros where it has none), little-endian float32s as they lie in
  // memory (every platform Node runs on is little-endian): one block, read back in one copy.
  // Then which documents have one, as found in that same pass.
  w.varint(dim > 0 ? 1 : 0);
  if (dim > 0) {
    const none = new Uint8Array(dim * 4);
    const has = new Uint8Array(source.count);
    let doc = 0;
    for (const { vector } of source.docs()) {
      const held = vector !== null && vector.length === dim;
      has[doc++] = held ? 1 : 0;
      w.bytes(held ? bytesOf(vector) : none);
      await check();
    }
    w.bytes(has);
  }
  for (const [term, pairs] of source.postings) {
    if (pairs.length === 0) continue;
    w.str(term);
    w.varint(pairs.length / 2);
    // Slots as gaps from the previous one: small numbers, mostly one byte each.
    let previous = 0;
    for (let i = 0; i < pairs.length; i += 2) {
      w.varint((pairs[i] as number) - previous);
      previous = pairs[i] as number;
      w.varint(pairs[i + 1] as number);
    }
    await check();
  }
  w.str('');
  const filing = source.filing;
  w.varint(filing ? 1 : 0);
  if (filing) {
    w.varint(filing.c1);
    w.varint(filing.c2);
    for (const centroids of [filing.top, ...filing.second]) w.bytes(bytesOf(centroids));
    // The total first, so that reading allocates each kind of row once for every list.
    w.varint(filing.rows);
    for (const list of filing.lists) {
      w.varint(list.slots.length);
      for (const part of [list.slots, list.codes, list.scales]) w.bytes(bytesOf(part));
      await check();
    }
  }
  await w.finish();
};

/**
 * Every term's postings in one block: term `i`'s (slot, frequency) pairs are
 * `pairs[ends[i - 1] .. ends[i])` (from 0 for the first). A million terms make three
 * allocations, not a million, and the block crosses from a worker thread in one transfer.
 */
export interface PackedPostings {
  terms: string[];
  pairs: Int32Array;
  ends: Int32Array;
}

export interface LoadedSnapshot {
  /** The embedder whose vectors the file holds. */
  embedder: string | null;
  ids: string[];
  versions: number[];
  stamps: Uint32Array;
  lengths: Float32Array;
  dimension: number;
  /**
   * Flat, `dimension` per document, whichever embedder made them (see `vectorsOf`); null when
   * none were saved. Room for a quarter more documents' vectors follows, zero: the vector index
   * takes this block as it is, and without the room the first vector written after a restart
   * copied all of it into a larger one (at a million entries, 400 MB: a second's pause with
   * the garbage collector).
   */
  vectors: Float32Array | null;
  hasVector: Uint8Array;
  /** Null when another text analysis made them: the caller analyses each kept entry's text again. */
  postings: PackedPostings | null;
  /** Null when not saved, or with another embedder's vectors. */
  filing: SavedFiling<SavedList[]> | null;
}

/** Whether a snapshot's vectors are those of `embedder` (a remote model's dimension is unknown until its first answer: the id decides then). */
export const vectorsOf = (embedder: string | null, dimension: number | null, file: { embedder: string | null; dimension: number }): boolean =>
  file.embedder === embedder && file.dimension > 0 && (dimension === null || file.dimension === dimension);

/** Items decoded between two calls to the pause (see `slicer`): about a millisecond's work. */
const PAUSE_EVERY = 4096;

/** A block of int32s that grows by half as pairs are appended (the file does not say how many come). */
class GrowingInts {
  data: Int32Array;
  length = 0;
  constructor(capacity: number) {
    this.data = new Int32Array(Math.max(1024, capacity));
  }
  reserve(more: number): void {
    if (this.length + more <= this.data.length) return;
    const grown = new Int32Array(Math.max(this.length + more, Math.ceil(this.data.length * 1.5)));
    grown.set(this.data.subarray(0, this.length));
    this.data = grown;
  }
  /** The ints appended, copied to an exact size when the slack is worth giving back. */
  done(): Int32Array {
    return this.data.length - this.length > this.length / 8 ? this.data.slice(0, this.length) : this.data.subarray(0, this.length);
  }
}

/**
 * Decode a snapshot; null when it is torn, damaged or of another format (the caller rebuilds).
 * A file of another analysis decodes without its postings (`postings` null).
 * Decoded in slices with `pause` between them (the server answers meanwhile). Every saved
 * vector is decoded: it is decoded off the main thread before the embedder is known, and the
 * caller keeps the vectors only under the embedder that made them (`vectorsOf`).
 */
export const readSnapshot = async (buf: Buffer, pause: () => Promise<void> = async () => {}): Promise<LoadedSnapshot | null> => {
  const r = await ByteReader.checked(buf, pause);
  if (!r) return null;
  try {
    const header = JSON.parse(r.str()) as { magic: string; format: number; analysis?: number; embedder: string | null; dimension: number; count: number };
    if (header.magic !== MAGIC || !READABLE_FORMATS.has(header.format)) return null;
    // Files from before the analysis was stamped (format 4) hold the first analysis's terms.
    const termsCurrent = (header.format === 4 ? 1 : header.analysis) === ANALYSIS_VERSION;
    const { dimension: dim, count } = header;
    // Straight into typed arrays sized from the header: a million documents make no garbage.
    const ids = new Array<string>(count);
    const versions = new Array<number>(count);
    const stamps = new Uint32Array(count);
    const lengths = new Float32Array(count);
    const hasVector = new Uint8Array(count);
    for (let doc = 0; doc < count; doc++) {
      ids[doc] = r.str();
      versions[doc] = r.varint();
      stamps[doc] = r.varint();
      lengths[doc] = r.f32();
      if (doc % PAUSE_EVERY === 0) await pause();
    }
    if (r.str() !== '') return null;
    let vectors: Float32Array | null = null;
    if (r.varint() === 1 && dim > 0) {
      vectors = readInto(r, new Float32Array(grownCapacity(count, count) * dim), count * dim);
      r.copyTo(hasVector, 0, count);
    }
    const postings = await readPostings(r, count, pause, termsCurrent);
    if (postings === undefined) return null;
    let filing: SavedFiling<SavedList[]> | null = null;
    if (r.varint() === 1 && vectors) {
      const c1 = r.varint();
      const c2 = r.varint();
      const top = readInto(r, new Float32Array(c1 * dim));
      const second = Array.from({ length: c1 }, () => readInto(r, new Float32Array(c2 * dim)));
      const rows = r.varint();
      const quantizer = CoarseQuantizer.restore(dim, c1, c2, top, second);
      const lists = readSavedLists(r, c1 * c2, rows, { dim, count, quantizer, vectors, hasVector });
      if (!lists) return null;
      filing = { c1, c2, top, second, rows: lists.reduce((n, list) => n + list.slots.length, 0), lists };
    }
    return { embedder: header.embedder, ids, versions, dimension: dim, stamps, lengths, vectors, hasVector, postings, filing };
  } catch {
    return null;
  }
};

/**
 * The postings section, each term's (slot, frequency) pairs in one block, checked as read;
 * undefined when damaged. `keep` false reads past it with the same checks and keeps nothing
 * (the terms of another analysis): null.
 */
const readPostings = async (r: ByteReader, count: number, pause: () => Promise<void>, keep: boolean): Promise<PackedPostings | null | undefined> => {
  const terms: string[] = [];
  const ends: number[] = [];
  // Most postings take two or three bytes of the file: a first guess that rarely grows.
  const pairs = new GrowingInts(keep ? Math.floor((r.remaining * 2) / 5) : 0);
  let read = 0;
  for (let term = r.str(); term !== ''; term = r.str()) {
    const n = r.varint() * 2;
    // A pair takes two bytes at least: a count beyond what is left is a damaged file, not an allocation to try.
    if (n > r.remaining) return undefined;
    let slot = 0;
    if (keep) {
      pairs.reserve(n);
      const data = pairs.data;
      for (let i = pairs.length, end = pairs.length + n; i < end; i += 2) {
        slot += r.varint();
        data[i] = slot;
        data[i + 1] = r.varint();
      }
      pairs.length += n;
      terms.push(term);
      ends.push(pairs.length);
    } else {
      for (let i = 0; i < n; i += 2) {
        slot += r.varint();
        r.varint();
      }
    }
    if (slot >= count) return undefined;
    if (++read % PAUSE_EVERY === 0) await pause();
  }
  return keep ? { terms, pairs: pairs.done(), ends: Int32Array.from(ends) } : null;
};

/** The distinct memory blocks behind a decoded snapshot's typed arrays: moved, not copied, between threads. */
export const transferablesOf = (s: LoadedSnapshot): ArrayBuffer[] => {
  const arrays: ArrayBufferView[] = [s.stamps, s.lengths, s.hasVector];
  if (s.postings) arrays.push(s.postings.pairs, s.postings.ends);
  if (s.vectors) arrays.push(s.vectors);
  if (s.filing) {
    arrays.push(s.filing.top, ...s.filing.second);
    for (const list of s.filing.lists) arrays.push(list.slots, list.codes, list.scales);
  }
  // Views share blocks (the lists are views into three); a block may be listed once only.
  return [...new Set(arrays.map((a) => a.buffer as ArrayBuffer))];
};
