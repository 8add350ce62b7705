import type { ByteReader } from './byte-codec.ts';
import type { CoarseQuantizer } from './coarse-quantizer.ts';
import { VectorList } from './vector-list.ts';

/**
 * A saved index's inverted lists (index-snapshot.ts SavedList: `lists` of them, `rows` rows
 * in all), each a view into one block per kind of row: three allocations, not three per list
 * (a fresh allocation costs page faults, and large ones a collection). Every document with a
 * vector that no list holds is filed here under its nearest list, as ivf-lists.ts `restore`
 * would file it: a save writes the vectors embedded while it runs but not their rows (it
 * counted the lists' rows when it began), about a thousand at a million entries, and filing
 * those on the main thread copied every list to make room (100 MB), and the collection that
 * copy started marked the whole heap: over a second of a restart. Here it runs where the file
 * is decoded (a worker thread), with the room part of the blocks from the start. Null when
 * the lists do not add up to `rows` or name a document past `count`; throws when the file
 * ends early.
 */
export const readSavedLists = (
  r: ByteReader,
  lists: number,
  rows: number,
  saved: { dim: number; count: number; quantizer: CoarseQuantizer; vectors: Float32Array; hasVector: Uint8Array },
): Array<{ slots: Int32Array; codes: Int8Array; scales: Float32Array }> | null => {
  const { dim, count, quantizer, vectors, hasVector } = saved;
  // A first pass reads the slots alone: which documents some list holds.
  const from = r.at;
  const filed = new Uint8Array(count);
  let total = 0;
  for (let i = 0; i < lists; i++) {
    const n = r.varint();
    total += n;
    if (total > rows) return null;
    const slots = r.bytes(n * 4);
    for (let j = 0; j < n; j++) {
      const slot = slots.readInt32LE(j * 4);
      if (slot < 0 || slot >= count) return null;
      filed[slot] = 1;
    }
    r.bytes(n * (dim + 4));
  }
  if (total !== rows) return null;
  // In document order, each after its list's saved rows, as ivf-lists.ts files them.
  const extra = new Int32Array(lists);
  const unfiled: Array<[doc: number, list: number]> = [];
  for (let doc = 0; doc < count; doc++) {
    if (hasVector[doc] !== 1 || filed[doc] === 1) continue;
    const list = quantizer.assign(vectors, doc * dim);
    unfiled.push([doc, list]);
    extra[list] = (extra[list] as number) + 1;
  }
  const all = rows + unfiled.length;
  const slots = new Int32Array(all);
  const codes = new Int8Array(all * dim);
  const scales = new Float32Array(all);
  r.at = from;
  let at = 0;
  const filing = Array.from({ length: lists }, (_, i): VectorList => {
    const n = r.varint();
    r.copyTo(new Uint8Array(slots.buffer), at * 4, n * 4);
    r.copyTo(new Uint8Array(codes.buffer), at * dim, n * dim);
    r.copyTo(new Uint8Array(scales.buffer), at * 4, n * 4);
    const size = n + (extra[i] as number);
    const list = VectorList.of(dim, slots.subarray(at, at + size), codes.subarray(at * dim, (at + size) * dim), scales.subarray(at, at + size), n);
    at += size;
    return list;
  });
  for (const [doc, list] of unfiled) (filing[list] as VectorList).push(doc, vectors, doc * dim);
  return filing.map((list) => ({ slots: list.slots, codes: list.codes, scales: list.scales }));
};
