import { describe, expect, it } from 'vitest';
import type { DocTerms } from '../../packages/server/src/search-rules/entry-text.ts';
import { random } from '../../packages/server/src/search/seeded-random.ts';
import { TextIndex } from '../../packages/server/src/search/text-index.ts';
import { packPostings } from '../helpers/packed-postings.ts';

// A namespace's searches read its own statistics only (text-index.ts statsOf): an index holding
// namespace 1 beside a larger namespace 2 answers a search of namespace 1 exactly as an index of
// namespace 1 alone does (slots, scores, bounds, prefixes, frequencies), through removals, a
// renumbering, and a restore from a saved block.

const rand = random(7);
const VOCABULARY = Array.from({ length: 300 }, (_, i) => `w${i}`);
/** Namespace 1 draws words with one skew, namespace 2 with another, and writes longer documents. */
const makeDoc = (space: number): DocTerms => {
  const tf = new Map<string, number>();
  let length = 0;
  const words = space === 1 ? 3 + Math.floor(rand() * 20) : 10 + Math.floor(rand() * 60);
  for (let i = 0; i < words; i++) {
    const weight = [1, 1.5, 2][Math.floor(rand() * 3)] as number;
    const w = VOCABULARY[Math.floor(VOCABULARY.length * rand() ** (space === 1 ? 3 : 1.5))] as string;
    tf.set(w, (tf.get(w) ?? 0) + weight);
    length += weight;
  }
  return { tf, length };
};
const query = (): string[] => {
  const terms = new Set<string>();
  const size = 1 + Math.floor(rand() * 5);
  while (terms.size < size) terms.add(VOCABULARY[Math.floor(VOCABULARY.length * rand() ** 2)] as string);
  return [...terms];
};


describe('in-process text index: statistics per namespace', () => {
  it('answers a namespace beside another exactly as an index of it alone', async () => {
    const count = 12_000;
    const mixed = new TextIndex();
    const alone = new TextIndex();
    const spaces = new Uint8Array(count);
    const docs: DocTerms[] = [];
    const mixedAlive = new Uint8Array(count);
    const aloneAlive = new Uint8Array(count);
    // Namespace 1 first alone (one namespace: the whole index's figures), then namespace 2 arrives.
    for (let slot = 0; slot < count; slot++) {
      const space = slot < 500 ? 1 : rand() < 0.2 ? 1 : 2;
      const doc = makeDoc(space);
      spaces[slot] = space;
      docs.push(doc);
      mixed.add(slot, doc, space);
      mixedAlive[slot] = 1;
      if (space === 1) {
        alone.add(slot, doc, 1);
        aloneAlive[slot] = 1;
      }
    }
    // Replaced documents of both namespaces (removed with their terms).
    for (let slot = 0; slot < count; slot += 7) {
      mixed.remove(slot, docs[slot]);
      mixedAlive[slot] = 0;
      if (spaces[slot] === 1) {
        alone.remove(slot, docs[slot]);
        aloneAlive[slot] = 0;
      }
    }
    const same = (a: TextIndex, aAlive: Uint8Array, b: TextIndex, bAlive: Uint8Array, inA: (slot: number) => boolean): void => {
      for (let q = 0; q < 60; q++) {
        const terms = query();
        const weights = new Map(terms.slice(1).map((t) => [t, 0.5] as const));
        expect(a.search(terms, 10, aAlive, inA, weights, 1), terms.join(' ')).toEqual(b.search(terms, 10, bAlive, () => true, weights, 1));
        const [as, bs] = [a.statsOf(1), b.statsOf(1)];
        expect([as.docs, as.average, ...terms.map(as.df)]).toEqual([bs.docs, bs.average, ...terms.map(bs.df)]);
      }
      expect(a.expandPrefix(['w1'], () => true, 1)).toEqual(b.expandPrefix(['w1'], () => true, 1));
      // Namespace 2's statistics are its own too, and a namespace never seen holds nothing.
      expect(a.statsOf(2).docs).toBe([...aAlive].filter((x, slot) => x === 1 && !inA(slot)).length);
      expect(a.statsOf(3).docs).toBe(0);
      expect(a.search(['w0'], 10, aAlive, () => true, undefined, 3)).toEqual([]);
    };
    const inOne = (slot: number): boolean => spaces[slot] === 1;
    same(mixed, mixedAlive, alone, aloneAlive, inOne);

    // Restored from a saved block: each slot's namespace comes with it, frequencies are counted again.
    const restored = new TextIndex();
    const liveSlots = [...mixedAlive.keys()].filter((slot) => mixedAlive[slot] === 1);
    const remap = new Int32Array(count).fill(-1);
    liveSlots.forEach((slot, i) => (remap[slot] = i));
    const saved = packPostings(mixed);
    for (let i = 0; i < saved.pairs.length; i += 2) saved.pairs[i] = remap[saved.pairs[i] as number] as number;
    // Dead slots' postings are not saved (index-persistence.ts drops them): left out here too.
    const kept: number[] = [];
    const ends: number[] = [];
    saved.terms.forEach((_, t) => {
      for (let i = t === 0 ? 0 : (saved.ends[t - 1] as number); i < (saved.ends[t] as number); i += 2) if ((saved.pairs[i] as number) >= 0) kept.push(saved.pairs[i] as number, saved.pairs[i + 1] as number);
      ends.push(kept.length);
    });
    const lengths = Float32Array.from(liveSlots, (slot) => (docs[slot] as DocTerms).length);
    await restored.restore(lengths, { terms: saved.terms, pairs: Int32Array.from(kept), ends: Int32Array.from(ends) }, async () => {}, Uint16Array.from(liveSlots, (slot) => spaces[slot] as number));
    const restoredAlive = new Uint8Array(liveSlots.length).fill(1);
    const aloneRenumbered = new TextIndex();
    const aloneRenumberedAlive = new Uint8Array(liveSlots.length);
    liveSlots.forEach((slot, i) => {
      if (spaces[slot] !== 1) return;
      aloneRenumbered.add(i, docs[slot] as DocTerms, 1);
      aloneRenumberedAlive[i] = 1;
    });
    same(restored, restoredAlive, aloneRenumbered, aloneRenumberedAlive, (i) => spaces[liveSlots[i] as number] === 1);

    // A renumbering drops the dead slots of both: the namespace still answers as alone.
    mixed.compact(remap, liveSlots.length);
    alone.compact(remap, liveSlots.length);
    same(mixed, restoredAlive, alone, aloneRenumberedAlive, (i) => spaces[liveSlots[i] as number] === 1);
  });

  it('counts each term in each of many namespaces through writes, removals and a renumbering', () => {
    const index = new TextIndex();
    const docs: { doc: DocTerms; space: number; live: boolean }[] = [];
    for (let slot = 0; slot < 3_000; slot++) {
      const space = 1 + Math.floor(rand() * 12);
      const doc = makeDoc(space % 2 === 0 ? 1 : 2);
      index.add(slot, doc, space);
      docs.push({ doc, space, live: true });
    }
    for (let slot = 0; slot < 3_000; slot += 3) {
      index.remove(slot, (docs[slot] as { doc: DocTerms }).doc);
      (docs[slot] as { live: boolean }).live = false;
    }
    const expectCounts = (held: typeof docs): void => {
      for (let space = 1; space <= 13; space++) {
        const mine = held.filter((d) => d.live && d.space === space);
        const stats = index.statsOf(space);
        expect(stats.docs).toBe(mine.length);
        for (const term of VOCABULARY.slice(0, 60)) expect(stats.df(term), `${term} in ${space}`).toBe(mine.filter((d) => d.doc.tf.has(term)).length);
      }
    };
    expectCounts(docs);
    const remap = new Int32Array(3_000).fill(-1);
    const kept = docs.filter((d, slot) => d.live && (remap[slot] = docs.slice(0, slot).filter((x) => x.live).length) >= 0);
    index.compact(remap, kept.length);
    expectCounts(kept);
  });

  it('reads the whole index as it always did while it holds one namespace', () => {
    const index = new TextIndex();
    for (let slot = 0; slot < 2_000; slot++) index.add(slot, makeDoc(1), 4);
    const alive = new Uint8Array(2_000).fill(1);
    for (let q = 0; q < 20; q++) {
      const terms = query();
      expect(index.search(terms, 10, alive, () => true, undefined, 4)).toEqual(index.search(terms, 10, alive, () => true));
      for (const t of terms) expect(index.statsOf(4).df(t)).toBe(index.docFrequency(t));
    }
    // Another namespace's search finds nothing, and reads no figure of namespace 4.
    expect(index.statsOf(5)).toMatchObject({ docs: 0, average: 1 });
    expect(index.statsOf(5).df('w0')).toBe(0);
    expect(index.expandPrefix(['w'], () => true, 5)).toEqual([]);
  });
});
