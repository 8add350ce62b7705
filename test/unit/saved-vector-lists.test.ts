import { describe, expect, it } from 'vitest';
import { ByteWriter } from '../../packages/server/src/search/byte-codec.ts';
import { CoarseQuantizer } from '../../packages/server/src/search/coarse-quantizer.ts';
import { type SavedList, type SnapshotDoc, readSnapshot, writeSnapshot } from '../../packages/server/src/search/index-snapshot.ts';
import { VectorList } from '../../packages/server/src/search/vector-list.ts';
import { entryOf } from '../helpers/saved-search-index.ts';

const DIM = 8;
const COUNT = 60;

/** A deterministic generator, so a failure repeats. */
const randomFrom = (seed: number) => () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32 - 0.5;

const unit = (next: () => number): Float32Array => {
  const v = Float32Array.from({ length: DIM }, next);
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
};

const bytesOf = async (docs: SnapshotDoc[], filing: { quantizer: CoarseQuantizer; lists: VectorList[] }): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  const lists = filing.lists.map((l): SavedList => ({ slots: l.slots.slice(0, l.count), codes: l.codes.slice(0, l.count * DIM), scales: l.scales.slice(0, l.count) }));
  const source = {
    embedder: 'test',
    dimension: DIM,
    docs: () => docs,
    count: docs.length,
    postings: [],
    filing: { ...filing.quantizer.parts, rows: lists.reduce((n, l) => n + l.slots.length, 0), lists },
    stillValid: () => true,
  };
  await writeSnapshot(new ByteWriter(async (chunk) => void chunks.push(Buffer.from(chunk))), source);
  return Buffer.concat(chunks);
};

/** The inverted lists of a saved index, as the decoder hands them to the vector index (see ivf-lists.ts restore). */
describe('saved vector lists', () => {
  const next = randomFrom(11);
  const vectors = Array.from({ length: COUNT }, () => unit(next));
  const flat = new Float32Array(COUNT * DIM);
  vectors.forEach((v, i) => flat.set(v, i * DIM));
  const centroids = (n: number) => Float32Array.from({ length: n * DIM }, next);
  const quantizer = CoarseQuantizer.restore(DIM, 2, 3, centroids(2), [centroids(3), centroids(3)]);
  // Documents 2, 5, 8, … have a vector the save did not file (embedded while it ran); 4, 11, 18, … have none.
  const hasVector = (doc: number) => doc % 7 !== 4;
  const filedWhenSaved = (doc: number) => hasVector(doc) && doc % 3 !== 2;
  const docs: SnapshotDoc[] = vectors.map((v, doc) => ({ entry: entryOf(doc), length: 5, vector: hasVector(doc) ? v : null }));

  it('files every saved vector no list holds under its nearest list, after the rows saved, in document order', async () => {
    const saved = Array.from({ length: quantizer.lists }, () => new VectorList(DIM));
    // Saved rows in an order of their own (lists hold them as they were filed).
    for (let doc = COUNT - 1; doc >= 0; doc--) if (filedWhenSaved(doc)) saved[quantizer.assign(flat, doc * DIM)]?.push(doc, flat, doc * DIM);
    const expected = Array.from({ length: quantizer.lists }, () => new VectorList(DIM));
    for (const [i, list] of saved.entries()) for (let j = 0; j < list.count; j++) expected[i]?.push(list.slots[j] as number, flat, (list.slots[j] as number) * DIM);
    for (let doc = 0; doc < COUNT; doc++) if (hasVector(doc) && !filedWhenSaved(doc)) expected[quantizer.assign(flat, doc * DIM)]?.push(doc, flat, doc * DIM);

    const loaded = await readSnapshot(await bytesOf(docs, { quantizer, lists: saved }));
    const lists = loaded?.filing?.lists ?? [];
    expect(lists.map((l) => [...l.slots])).toEqual(expected.map((l) => [...l.slots.subarray(0, l.count)]));
    expect(lists.map((l) => [...l.codes])).toEqual(expected.map((l) => [...l.codes.subarray(0, l.count * DIM)]));
    expect(lists.map((l) => [...l.scales])).toEqual(expected.map((l) => [...l.scales.subarray(0, l.count)]));
    const held = lists.flatMap((l) => [...l.slots]).sort((a, b) => a - b);
    expect(held).toEqual(Array.from({ length: COUNT }, (_, doc) => doc).filter(hasVector));
    expect(loaded?.filing?.rows).toBe(held.length);
  });

  it('refuses lists that name a document the file does not hold', async () => {
    const saved = Array.from({ length: quantizer.lists }, () => new VectorList(DIM));
    for (let doc = 0; doc < COUNT; doc++) if (filedWhenSaved(doc)) saved[quantizer.assign(flat, doc * DIM)]?.push(doc, flat, doc * DIM);
    saved[0]?.push(COUNT, flat, 0);
    expect(await readSnapshot(await bytesOf(docs, { quantizer, lists: saved }))).toBeNull();
  });
});
