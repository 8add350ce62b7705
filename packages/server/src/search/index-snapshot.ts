import { crc32 } from 'node:zlib';
import type { Entry } from '../domain/entry.ts';
import { ByteReader, ByteWriter } from './byte-codec.ts';

/**
 * The in-process index as a file, so a restart loads it instead of analysing and embedding
 * every entry again. It names each document by address, version and a stamp of its content,
 * and start-up keeps a document only where the store's current head is that very version: a
 * stale file (older than the store, or newer writes lost to a crash) costs re-indexing the
 * entries that differ, never a wrong answer. A torn file fails its CRC and is ignored whole.
 */
const MAGIC = 'cairn-search-index';
const FORMAT = 2;

/** Where the index keeps its file; the backend that owns a directory provides it. */
export interface SnapshotFile {
  read(): Promise<Buffer | null>;
  /** Replace the file atomically with what `fill` streams to `sink`; a throw leaves the old file. */
  write(fill: (sink: (chunk: Buffer) => Promise<void>) => Promise<void>): Promise<void>;
}

export const addressOf = (e: Entry): string => `${e.namespace}\u0000${e.entity_path}\u0000${e.key}`;

/** Two versions with the same number but different content (a lost, rewritten write) differ here. */
export const stampOf = (e: Entry): number => crc32(`${e.written_at} ${e.content_hash} ${e.deleted}`) >>> 0;

export interface SnapshotDoc {
  entry: Entry;
  length: number;
  vector: Float32Array | null;
}

export interface SnapshotSource {
  embedder: string | null;
  dimension: number;
  /** Live documents in the order they are numbered in the file (0, 1, …). */
  docs: Iterable<SnapshotDoc>;
  /** Each term's postings, with slots already numbered as in `docs` (ascending). */
  postings: Iterable<[string, ArrayLike<number>, ArrayLike<number>]>;
  /** Captured with `docs`' numbering; null while the vectors are scanned exactly (untrained). */
  filing: SavedFiling | null;
  /** Checked between chunks: false abandons the write (the index was renumbered meanwhile). */
  stillValid: () => boolean;
}

/** The inverted file's centroids (coarse-quantizer.ts) and each document's list (-1: none). */
export interface SavedFiling {
  c1: number;
  c2: number;
  top: Float32Array;
  second: Float32Array[];
  listOf: Int32Array;
}

const floatBytes = (v: Float32Array): Uint8Array => new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
/** A copy, aligned for float reads (a view into the file's buffer may not be). */
const floatsOf = (bytes: Buffer): Float32Array => {
  const out = new Float32Array(bytes.length / 4);
  new Uint8Array(out.buffer).set(bytes);
  return out;
};

export class SnapshotAbandoned extends Error {}

export const writeSnapshot = async (w: ByteWriter, source: SnapshotSource): Promise<void> => {
  const check = async (): Promise<void> => {
    await w.flushIfFull();
    if (!source.stillValid()) throw new SnapshotAbandoned('the index was renumbered while saving');
  };
  w.str(JSON.stringify({ magic: MAGIC, format: FORMAT, embedder: source.embedder, dimension: source.dimension }));
  for (const { entry, length, vector } of source.docs) {
    w.str(addressOf(entry));
    w.varint(entry.version);
    w.varint(stampOf(entry));
    w.f32(length);
    // Little-endian float32s as they lie in memory (every platform Node runs on is little-endian).
    if (vector && vector.length === source.dimension) {
      w.varint(1);
      w.bytes(floatBytes(vector));
    } else w.varint(0);
    await check();
  }
  w.str('');
  for (const [term, slots, tfs] of source.postings) {
    if (slots.length === 0) continue;
    w.str(term);
    w.varint(slots.length);
    let previous = 0;
    for (let i = 0; i < slots.length; i++) {
      w.varint((slots[i] as number) - previous);
      previous = slots[i] as number;
      w.varint(tfs[i] as number);
    }
    await check();
  }
  w.str('');
  const filing = source.filing;
  w.varint(filing ? 1 : 0);
  if (filing) {
    w.varint(filing.c1);
    w.varint(filing.c2);
    for (const centroids of [filing.top, ...filing.second]) w.bytes(floatBytes(centroids));
    for (let doc = 0; doc < filing.listOf.length; doc++) {
      w.varint((filing.listOf[doc] as number) + 1);
      if (doc % 100_000 === 0) await check();
    }
  }
  await w.finish();
};

export interface LoadedSnapshot {
  ids: string[];
  versions: number[];
  stamps: Uint32Array;
  lengths: Float32Array;
  dimension: number;
  /** Flat, `dimension` per document; null when the file's embedder is not the current one. */
  vectors: Float32Array | null;
  hasVector: Uint8Array;
  postings: Array<[string, number[], number[]]>;
  /** Null when not saved, or with another embedder's vectors. */
  filing: SavedFiling | null;
}

/** Decode a snapshot; null when it is torn, damaged or of another format (the caller rebuilds). */
export const readSnapshot = (buf: Buffer, embedder: string | null, dimension: number | null): LoadedSnapshot | null => {
  const r = ByteReader.checked(buf);
  if (!r) return null;
  try {
    const header = JSON.parse(r.str()) as { magic: string; format: number; embedder: string | null; dimension: number };
    if (header.magic !== MAGIC || header.format !== FORMAT) return null;
    const dim = header.dimension;
    // A remote model's dimension is unknown until its first answer: the id decides then.
    const sameEmbedder = header.embedder === embedder && dim > 0 && (dimension === null || dim === dimension);
    const ids: string[] = [];
    const versions: number[] = [];
    const stamps: number[] = [];
    const lengths: number[] = [];
    const flags: number[] = [];
    const vectorBytes: Buffer[] = [];
    for (let id = r.str(); id !== ''; id = r.str()) {
      ids.push(id);
      versions.push(r.varint());
      stamps.push(r.varint());
      lengths.push(r.f32());
      const has = r.varint();
      const bytes = has === 1 ? r.bytes(dim * 4) : null;
      flags.push(has === 1 && sameEmbedder ? 1 : 0);
      if (bytes && sameEmbedder) vectorBytes.push(bytes);
      else if (sameEmbedder) vectorBytes.push(Buffer.alloc(dim * 4));
    }
    const postings: Array<[string, number[], number[]]> = [];
    for (let term = r.str(); term !== ''; term = r.str()) {
      const count = r.varint();
      const slots = new Array<number>(count);
      const tfs = new Array<number>(count);
      let slot = 0;
      for (let i = 0; i < count; i++) {
        slot += r.varint();
        slots[i] = slot;
        tfs[i] = r.varint();
      }
      postings.push([term, slots, tfs]);
    }
    let filing: SavedFiling | null = null;
    if (r.varint() === 1 && sameEmbedder) {
      const c1 = r.varint();
      const c2 = r.varint();
      const top = floatsOf(r.bytes(c1 * dim * 4));
      const second = Array.from({ length: c1 }, () => floatsOf(r.bytes(c2 * dim * 4)));
      const listOf = new Int32Array(ids.length);
      for (let doc = 0; doc < ids.length; doc++) listOf[doc] = r.varint() - 1;
      filing = { c1, c2, top, second, listOf };
    }
    let vectors: Float32Array | null = null;
    if (sameEmbedder) {
      vectors = new Float32Array(ids.length * dim);
      const view = new Uint8Array(vectors.buffer);
      vectorBytes.forEach((bytes, i) => view.set(bytes, i * dim * 4));
    }
    return { ids, versions, dimension: dim, stamps: Uint32Array.from(stamps), lengths: Float32Array.from(lengths), vectors, hasVector: Uint8Array.from(flags), postings, filing };
  } catch {
    return null;
  }
};
