import type { Logger } from 'pino';
import type { Entry } from '../domain/entry.ts';
import type { Embedder } from '../ports/embedder.ts';
import { docTerms, embeddingText } from '../search-rules/entry-text.ts';
import { ByteWriter, slicer } from './byte-codec.ts';
import { CoarseQuantizer } from './coarse-quantizer.ts';
import type { EmbedQueue } from './embed-queue.ts';
import { type PackedPostings, type SavedFiling, type SavedList, type SnapshotDoc, type SnapshotFile, SnapshotAbandoned, vectorsOf, writeSnapshot } from './index-snapshot.ts';
import { type PrefetchedSnapshotFile, loadSnapshot } from './snapshot-loader.ts';
import type { SlotTable } from './slot-table.ts';
import { TextIndex } from './text-index.ts';
import { VectorIndex } from './vector-index.ts';
import { VectorList } from './vector-list.ts';

/** The parts of the in-process index (memory-index.ts) that saving and restoring touch. */
export interface IndexParts {
  readonly slots: SlotTable;
  /** Replaced whole when the saved terms were of another analysis (see `reanalyse`). */
  text: TextIndex;
  vectors: VectorIndex | null;
  readonly queue: EmbedQueue<Entry> | null;
  readonly embedder: Embedder | null;
  readonly logger: Logger;
}

export interface Restored {
  stamps: Uint32Array;
  /**
   * After every head was offered to `slots.claim`: drop what none claimed, analyse each
   * entry's text again when the saved terms were of another analysis, embed what lacks a
   * vector. Resolves to the number of entries analysed again (0 when the terms were kept).
   */
  finish(): Promise<number>;
}

/**
 * Load the saved index into empty parts; null (and nothing loaded) when there is none or it is
 * unusable. The file is decoded off the main thread (snapshot-loader.ts), or was already being
 * decoded when it was handed over (a prefetched file).
 */
export const restoreSnapshot = async (parts: IndexParts, file: SnapshotFile | PrefetchedSnapshotFile): Promise<Restored | null> => {
  const started = performance.now();
  const saved = await ('loading' in file ? file.loading : loadSnapshot(file, parts.logger));
  if (!saved) return null;
  // Vectors count only under the embedder that made them.
  if (!parts.embedder || !vectorsOf(parts.embedder.id, parts.embedder.dimension ?? null, saved)) {
    saved.vectors = null;
    saved.filing = null;
  }
  // In slices, as a save is: the server answers between them.
  const pause = slicer();
  await parts.slots.restore(saved.ids, saved.versions, pause);
  // Terms of another analysis are not restored, only the lengths, so that the counts stay
  // right while the heads are claimed; `finish` then indexes every entry's text again.
  const postings = saved.postings;
  await parts.text.restore(saved.lengths, postings ?? NO_POSTINGS, pause, parts.slots.namespaceNumbers);
  if (!postings) parts.logger.info('the saved search index holds another text analysis\u2019s terms: each entry\u2019s text is analysed again');
  if (saved.vectors && parts.embedder) {
    parts.vectors ??= new VectorIndex(parts.embedder.id, saved.dimension);
    const f = saved.filing;
    const dim = saved.dimension;
    parts.vectors.restore(
      saved.vectors,
      saved.hasVector,
      f ? { quantizer: CoarseQuantizer.restore(dim, f.c1, f.c2, f.top, f.second), lists: f.lists.map((l) => VectorList.of(dim, l.slots, l.codes, l.scales)) } : null,
    );
  } else if (parts.embedder) {
    parts.logger.info({ embedder: parts.embedder.id }, 'the saved search index holds another embedder\u2019s vectors: every entry is embedded again');
  }
  parts.logger.info({ entries: saved.ids.length, ms: Math.round(performance.now() - started) }, 'saved search index read');
  const count = saved.ids.length;
  return {
    stamps: saved.stamps,
    finish: async () => {
      for (const slot of parts.slots.dropUnclaimed()) {
        parts.text.remove(slot);
        parts.vectors?.delete(slot);
      }
      const reanalysed = postings ? 0 : await reanalyse(parts, pause);
      for (let slot = 0; slot < count; slot++) {
        const entry = parts.slots.entry(slot);
        if (entry && !parts.vectors?.holds(slot)) parts.queue?.push({ item: entry, text: embeddingText(entry) });
      }
      return reanalysed;
    },
  };
};

const NO_POSTINGS: PackedPostings = { terms: [], pairs: new Int32Array(0), ends: new Int32Array(0) };

/** Live slots indexed between two looks at the clock while the text is analysed again. */
const REANALYSE_CHECK_EVERY = 64;

/**
 * Index the text of every live slot again, into a new text index that replaces the one the
 * load used (which held only the entries indexed anew: the saved terms were of another
 * analysis). Built aside, in slot order as posting lists are, in slices between requests;
 * writes wait until the index is loaded, so only forgets happen meanwhile, and a slot they
 * kill after it was added here is removed before the new index is taken. Returns the slots indexed.
 */
export const reanalyse = async (parts: IndexParts, pause: () => Promise<void>): Promise<number> => {
  const { slots } = parts;
  const text = new TextIndex();
  const added = new Uint8Array(slots.size);
  let count = 0;
  for (let slot = 0; slot < slots.size; slot++) {
    const entry = slots.entry(slot);
    if (entry && slots.alive[slot] === 1) {
      text.add(slot, docTerms(entry), slots.namespaceAt(slot));
      added[slot] = 1;
      count += 1;
    }
    if (slot % REANALYSE_CHECK_EVERY === 0) await pause();
  }
  for (let slot = 0; slot < added.length; slot++) {
    if (added[slot] === 1 && slots.alive[slot] !== 1) {
      text.remove(slot);
      count -= 1;
    }
  }
  parts.text = text;
  return count;
};

/** Slots numbered (or inverted lists counted) between two looks at the clock while a save starts. */
const NUMBER_EVERY = 4096;

/**
 * Save the index as it is now, streamed: live documents are numbered densely at the start (a
 * list of references, not a copy), then written with their postings, every step in slices of
 * a few milliseconds between requests (`pause`). Slots taken after the save started are left
 * for the next one; a renumbering meanwhile abandons the save (the next one starts over).
 * Resolves to the documents saved, or null when abandoned.
 */
export const saveSnapshot = async (parts: IndexParts, file: SnapshotFile, pause: () => Promise<void> = slicer()): Promise<number | null> => {
  const { slots, text } = parts;
  const generation = slots.generation;
  const stillValid = (): boolean => slots.generation === generation;
  // The numbering is fixed by the slots present now; a slot that dies while this runs is
  // saved as it was (start-up checks each document against the store's heads).
  const size = slots.size;
  const remap = new Int32Array(size).fill(-1);
  const liveSlots = new Int32Array(size);
  const liveEntries: Entry[] = [];
  for (let slot = 0; slot < size; slot++) {
    if (slot > 0 && slot % NUMBER_EVERY === 0) {
      await pause();
      if (!stillValid()) return null;
    }
    const entry = slots.entry(slot);
    if (entry && slots.alive[slot] === 1) {
      remap[slot] = liveEntries.length;
      liveSlots[liveEntries.length] = slot;
      liveEntries.push(entry);
    }
  }
  const count = liveEntries.length;
  const filed = parts.vectors?.filing() ?? null;
  const dim = parts.vectors?.dimension ?? 0;
  // Rows filed from here on (vectors embedded while this is written) wait for the next save;
  // the lists only grow (a renumbering replaces them, and abandons this save).
  const counts = filed?.lists.map((list) => list.count) ?? [];
  const keptIn = (list: VectorList, n: number): number => {
    let kept = 0;
    for (let j = 0; j < n; j++) if ((remap[list.slots[j] as number] ?? -1) >= 0) kept += 1;
    return kept;
  };
  let rows = 0;
  for (const [i, list] of (filed?.lists ?? []).entries()) {
    rows += keptIn(list, counts[i] as number);
    await pause();
    if (!stillValid()) return null;
  }
  const filing: SavedFiling | null = filed && {
    ...filed.quantizer.parts,
    rows,
    // Each list's rows renumbered as saved; rows of slots not saved (dead, or newer) are left out.
    lists: (function* (): Generator<SavedList> {
      for (const [i, list] of filed.lists.entries()) {
        const n = counts[i] as number;
        const kept = keptIn(list, n);
        const out: SavedList = { slots: new Int32Array(kept), codes: new Int8Array(kept * dim), scales: new Float32Array(kept) };
        let k = 0;
        for (let j = 0; j < n; j++) {
          const to = remap[list.slots[j] as number] ?? -1;
          if (to < 0) continue;
          out.slots[k] = to;
          out.codes.set(list.codes.subarray(j * dim, (j + 1) * dim), k * dim);
          out.scales[k] = list.scales[j] as number;
          k += 1;
        }
        yield out;
      }
    })(),
  };
  function* docs(): Generator<SnapshotDoc> {
    for (let doc = 0; doc < count; doc++) {
      const slot = liveSlots[doc] as number;
      yield { entry: liveEntries[doc] as Entry, length: text.lengthOf(slot), vector: parts.vectors?.vectorOf(slot) ?? null };
    }
  }
  function* postings(): Generator<[string, Int32Array]> {
    // One scratch array for every term's kept pairs: the writer encodes each before asking
    // for the next, so no term's postings are copied into an array of their own.
    let scratch = new Int32Array(1024);
    for (const [term, pairs] of text.terms()) {
      if (scratch.length < pairs.length) scratch = new Int32Array(pairs.length * 2);
      let at = 0;
      for (let i = 0; i < pairs.length; i += 2) {
        // Slots taken after the numbering above are not in this save: the store re-offers them.
        const to = remap[pairs[i] as number] ?? -1;
        if (to < 0) continue;
        scratch[at++] = to;
        scratch[at++] = pairs[i + 1] as number;
      }
      yield [term, scratch.subarray(0, at)];
    }
  }
  try {
    const source = { embedder: parts.embedder?.id ?? null, dimension: dim, docs, count, postings: postings(), filing, stillValid };
    await file.write((sink) => writeSnapshot(new ByteWriter(sink), source, pause));
  } catch (error) {
    if (error instanceof SnapshotAbandoned) return null;
    throw error;
  }
  return count;
};
