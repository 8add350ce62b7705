import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import { BuiltinEmbedder } from '../../packages/server/src/embed/builtin-embedder.ts';
import { MemorySearchIndex } from '../../packages/server/src/search/memory-index.ts';
import { parseQuery } from '../../packages/server/src/search-rules/query.ts';
import { makeEntry } from '../contract/store-contract.ts';
import { entryOf, word } from '../helpers/saved-search-index.ts';

// A version whose searchable text (value and tags) is the one before's takes that version's
// slot, terms and vector instead of being analysed and embedded again: searches must find it,
// and only it, exactly as if it had been indexed anew.

const logger = pino({ level: 'silent' });
const embedder = new BuiltinEmbedder();
const open: MemorySearchIndex[] = [];
afterEach(async () => {
  for (const index of open.splice(0)) await index.close();
});

const newIndex = (): MemorySearchIndex => {
  const index = new MemorySearchIndex(embedder, logger, null);
  open.push(index);
  return index;
};

/** `key@version confidence` of what a text search finds, at `now`. */
const found = async (index: MemorySearchIndex, text: string, now = Date.now()): Promise<string[]> =>
  (await index.textCandidates(parseQuery(text), { namespace: 'default', now }, 10)).candidates.map((c) => `${c.entry.key}@${c.entry.version} ${c.entry.confidence}`);

const next = (entry: Entry, changes: Partial<Entry>): Entry => makeEntry({ ...entry, version: entry.version + 1, ...changes });

describe('a version with the text of the one before', () => {
  it('keeps its slot, terms and vector, and is what searches find; a change of value or tags is indexed anew', async () => {
    const index = newIndex();
    const first = entryOf(1);
    index.apply(first);
    index.apply(entryOf(2));
    await index.settled();
    const slot = index.slots.slotOf(first) as number;
    const vector = Float32Array.from(index.vectors?.vectorOf(slot) ?? []);

    const rated = next(first, { confidence: 0.3, event_type: 'outcome.failure', provenance: { connector: 'github', delivery_id: 'd-2' } });
    index.apply(rated);
    await index.settled();
    expect(index.slots.slotOf(rated)).toBe(slot);
    expect(index.slots.size).toBe(2);
    expect(index.text.docCount).toBe(2);
    expect(Float32Array.from(index.vectors?.vectorOf(slot) ?? [])).toEqual(vector);
    expect(await found(index, word(1))).toEqual(['n1@2 0.3']);
    const [nearest] = await index.vectorCandidates(vector, { namespace: 'default', now: Date.now() }, 1);
    expect(nearest?.entry).toBe(rated);

    // An older version heard late (the S3 change log may deliver out of order) changes nothing.
    index.apply(first);
    expect(await found(index, word(1))).toEqual(['n1@2 0.3']);

    // The same value with its keys in another order (PostgreSQL's jsonb reorders them) is read
    // in that order, so it may index differently: a new slot.
    const reordered = makeEntry({ ...entryOf(7), value: { b: `${word(71)} second`, a: `${word(70)} first` } });
    index.apply(makeEntry({ ...reordered, value: { a: `${word(70)} first`, b: `${word(71)} second` } }));
    const reorderedSlot = index.slots.slotOf(reordered);
    index.apply(next(makeEntry({ ...reordered, version: 1 }), { confidence: 0.2 }));
    expect(index.slots.slotOf(reordered)).not.toBe(reorderedSlot);
    expect(await found(index, word(70))).toEqual(['n7@2 0.2']);

    // New tags are new text: a new slot, found by them.
    const tagged = next(rated, { tags: ['zqtaggedx'] });
    index.apply(tagged);
    expect(index.slots.slotOf(tagged)).not.toBe(slot);
    expect(await found(index, 'zqtaggedx')).toEqual(['n1@3 0.3']);

    // A new value: a new slot, its old words no longer find it.
    const rewritten = next(tagged, { value: { summary: `${word(9)} rewritten` } });
    index.apply(rewritten);
    expect(await found(index, word(1))).toEqual([]);
    expect(await found(index, word(9))).toEqual(['n1@4 0.3']);

    // An expiry set by a version of the same text is read by the filter.
    const expiring = next(rewritten, { expires_at: new Date(Date.now() + 60_000).toISOString() });
    index.apply(expiring);
    expect(index.slots.slotOf(expiring)).toBe(index.slots.slotOf(rewritten));
    expect(await found(index, word(9))).toEqual(['n1@5 0.3']);
    expect(await found(index, word(9), Date.now() + 120_000)).toEqual([]);

    // A tombstone removes it.
    index.apply(next(expiring, { deleted: true }));
    expect(await found(index, word(9))).toEqual([]);
    expect(index.text.docCount).toBe(2);
  });

  it('is embedded itself when the one before was still waiting for its vector', async () => {
    const index = newIndex();
    const first = entryOf(3);
    // No turn between the two: the first version's embedding has not come back when the second is applied.
    index.apply(first);
    const second = next(first, { confidence: 0.5 });
    index.apply(second);
    await index.settled();
    const slot = index.slots.slotOf(second) as number;
    expect(index.vectors?.holds(slot)).toBe(true);
    expect(index.vectors?.size).toBe(1);
  });
});
