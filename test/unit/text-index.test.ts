import { describe, expect, it } from 'vitest';
import { idf, termScore } from '../../packages/server/src/search-rules/bm25.ts';
import type { DocTerms } from '../../packages/server/src/search-rules/entry-text.ts';
import { random } from '../../packages/server/src/search/seeded-random.ts';
import { TextIndex } from '../../packages/server/src/search/text-index.ts';
import { packPostings } from '../helpers/packed-postings.ts';

// The text index skips work it can prove cannot change the top n (MaxScore): these tests hold
// it to the answer of scoring every document, on collections with postings long enough for
// the skipping to happen, common words repeated in some documents, dead documents and filters.

const rand = random(11);
/** Words drawn with a Zipf-like skew: a few occur in most documents, most in few. */
const VOCABULARY = Array.from({ length: 400 }, (_, i) => `w${i}`);
const word = (): string => VOCABULARY[Math.floor(VOCABULARY.length * rand() ** 3)] as string;

const makeDoc = (): DocTerms => {
  const tf = new Map<string, number>();
  let length = 0;
  const words = 3 + Math.floor(rand() * 40);
  for (let i = 0; i < words; i++) {
    // Field weights as entry-text gives them (1, 1.5, 2), so frequencies are not whole numbers.
    const weight = [1, 1.5, 2][Math.floor(rand() * 3)] as number;
    const w = word();
    tf.set(w, (tf.get(w) ?? 0) + weight);
    length += weight;
  }
  return { tf, length };
};

interface Collection {
  index: TextIndex;
  docs: (DocTerms | null)[];
  alive: Uint8Array;
}

const build = (count: number, deadEvery = 0): Collection => {
  const index = new TextIndex();
  const docs: (DocTerms | null)[] = [];
  const alive = new Uint8Array(count);
  for (let slot = 0; slot < count; slot++) {
    const doc = makeDoc();
    index.add(slot, doc);
    docs.push(doc);
    alive[slot] = 1;
  }
  if (deadEvery > 0) {
    for (let slot = 0; slot < count; slot += deadEvery) {
      index.remove(slot);
      alive[slot] = 0;
      docs[slot] = null;
    }
  }
  return { index, docs, alive };
};

/** Every live document scored in full, as BM25F defines it over the index's own statistics. */
const exhaustive = (c: Collection, terms: string[], weights: Map<string, number>, accept: (slot: number) => boolean) => {
  const live = c.docs.filter((d): d is DocTerms => d !== null);
  const average = live.reduce((s, d) => s + d.length, 0) / live.length;
  const scored: { slot: number; score: number }[] = [];
  c.docs.forEach((doc, slot) => {
    if (!doc || !accept(slot)) return;
    let score = 0;
    let matched = false;
    for (const term of terms) {
      const tf = doc.tf.get(term);
      if (tf === undefined) continue;
      matched = true;
      // Postings keep dead documents until compaction: df counts them, as the index does.
      const df = c.index.docFrequency(term);
      const weight = (weights.get(term) ?? 1) * idf(df, Math.max(c.index.docCount, df));
      score += termScore(weight, Math.round(tf * 10) / 10, doc.length, average);
    }
    if (matched) scored.push({ slot, score });
  });
  return scored.sort((a, b) => b.score - a.score || a.slot - b.slot);
};

const expectSameTop = (c: Collection, terms: string[], n: number, weights = new Map<string, number>(), accept: (slot: number) => boolean = () => true) => {
  const got = c.index.search(terms, n, c.alive, accept, weights);
  const want = exhaustive(c, terms, weights, accept);
  const scoreOf = new Map(want.map((w) => [w.slot, w.score]));
  expect(got.length, `results for ${terms.join(' ')}`).toBe(Math.min(n, want.length));
  got.forEach((g, i) => {
    // Each answer carries its full score, and the i-th is as good as the i-th of the full
    // ranking (equal scores may come in either order).
    expect(g.score, `score of slot ${g.slot}`).toBeCloseTo(scoreOf.get(g.slot) as number, 9);
    expect(g.score, `rank ${i} of ${terms.join(' ')}`).toBeCloseTo((want[i] as { score: number }).score, 9);
  });
};

/** A query of a few words: some rare, some from the common head of the vocabulary. */
const query = (): string[] => {
  const size = 1 + Math.floor(rand() * 6);
  const terms = new Set<string>();
  while (terms.size < size) terms.add(rand() < 0.5 ? (VOCABULARY[Math.floor(rand() * 12)] as string) : word());
  return [...terms];
};

describe('in-process text index: ranking with skipped work equals ranking everything', () => {
  const big = build(60_000);

  it('answers the top n of exhaustive BM25F for queries mixing rare and very common words', () => {
    // The commonest words are in most of the 60k documents: long lists, where skipping starts.
    expect(big.index.docFrequency('w0')).toBeGreaterThan(20_000);
    for (let q = 0; q < 60; q++) expectSameTop(big, query(), [1, 10, 50][q % 3] as number);
  });

  it('does so with expansion weights and with a filter that rejects most documents', () => {
    for (let q = 0; q < 30; q++) {
      const terms = query();
      const weights = new Map(terms.filter((_, i) => i % 2 === 1).map((t) => [t, 0.3 + rand() * 0.5]));
      expectSameTop(big, terms, 20, weights);
      expectSameTop(big, terms, 20, weights, (slot) => slot % 7 === 3);
    }
  });

  it('does so with dead documents still in the postings', () => {
    const withDead = build(40_000, 3);
    for (let q = 0; q < 40; q++) expectSameTop(withDead, query(), 25);
  });

  it('counts only live documents in a term\'s frequency when their terms come with the removal, ranking as an index of the live ones alone', () => {
    const c = build(20_000);
    // Half the documents replaced by new versions of themselves, some twice, and a tenth deleted.
    let next = 20_000;
    const alive = new Uint8Array(40_000);
    alive.set(c.alive);
    const docAt = new Map(c.docs.map((doc, slot) => [slot, doc as DocTerms]));
    for (let slot = 0; slot < 20_000; slot++) {
      const doc = c.docs[slot] as DocTerms;
      if (slot % 10 === 0) {
        c.index.remove(slot, doc);
        alive[slot] = 0;
      } else if (slot % 2 === 1) {
        c.index.remove(slot, doc);
        alive[slot] = 0;
        c.index.add(next, doc);
        docAt.set(next, doc);
        alive[next++] = 1;
      }
    }
    const fresh = new TextIndex();
    for (let slot = 0; slot < next; slot++) {
      if (alive[slot] !== 1) continue;
      fresh.add(slot, docAt.get(slot) as DocTerms);
    }
    for (const term of VOCABULARY.slice(0, 40)) expect(c.index.docFrequency(term), term).toBe(fresh.docFrequency(term));
    expect(c.index.docCount).toBe(fresh.docCount);
    for (let q = 0; q < 30; q++) {
      const terms = query();
      const got = c.index.search(terms, 20, alive, () => true);
      const want = fresh.search(terms, 20, alive, () => true);
      expect(got.map((g) => g.slot), terms.join(' ')).toEqual(want.map((w) => w.slot));
      got.forEach((g, i) => expect(g.score).toBeCloseTo((want[i] as { score: number }).score, 9));
    }
  });

  it('counts every posting across its windows of slots when nothing can be skipped', () => {
    // n above the matches: every slot is ranked, so a posting lost at a window's edge shows.
    expectSameTop(big, ['w0', 'w1'], 60_000);
    expectSameTop(big, ['w5', 'w250', 'w399'], 60_000);
  });

  it('keeps the lower slots among equal scores', () => {
    const index = new TextIndex();
    const count = 10_000;
    for (let slot = 0; slot < count; slot++) index.add(slot, { tf: new Map([['same', 1]]), length: 5 });
    const alive = new Uint8Array(count).fill(1);
    alive[2] = 0;
    expect(index.search(['same'], 4, alive, () => true).map((r) => r.slot)).toEqual([0, 1, 3, 4]);
  });

  it('answers nothing for unknown words and fewer than n when few documents match', () => {
    expect(big.index.search(['nowhere'], 10, big.alive, () => true)).toEqual([]);
    expectSameTop(big, ['w399', 'nowhere'], 1000);
  });
});

describe('in-process text index: the lists\' real maxima', () => {
  // 20k documents of length 10: 'c' in a tenth of them (idf 2.3), 'r' in 200 (idf 4.6), once
  // each. With n = 1 the bar is a document holding both; 'c' alone cannot pass it, so it only
  // completes the documents 'r' proposes, and only those its real maximum can lift past the
  // bar. `late` holds 'r' half as often and 'c' `cTimes` times: it passes the bar by less than
  // a twentieth of what 'c' adds, so a maximum found too low (stale, or shrunk) drops it.
  const collection = (): Collection => {
    const docs: DocTerms[] = [];
    for (let slot = 0; slot < 20_000; slot++) {
      const tf = new Map<string, number>([['filler', 1]]);
      if (slot % 10 === 0) tf.set('c', 1);
      if (slot % 100 === 0) tf.set('r', 1);
      docs.push({ tf, length: 10 });
    }
    const index = new TextIndex();
    docs.forEach((doc, slot) => index.add(slot, doc));
    return { index, docs, alive: new Uint8Array(docs.length).fill(1) };
  };
  const add = (c: Collection, doc: DocTerms): void => {
    c.index.add(c.docs.length, doc);
    c.docs.push(doc);
    c.alive = new Uint8Array(c.docs.length).fill(1);
  };
  const late = (cTimes: number): DocTerms => ({ tf: new Map([['r', 0.5], ['c', cTimes]]), length: 10 });
  const winner = (c: Collection): number | undefined => c.index.search(['r', 'c'], 1, c.alive, () => true)[0]?.slot;

  it('finds a document added after a search whose posting is above what its list held', () => {
    const c = collection();
    expectSameTop(c, ['r', 'c'], 1);
    add(c, late(4.5));
    expectSameTop(c, ['r', 'c'], 1);
    expect(winner(c)).toBe(20_000);
  });

  it('stays exact when the average document grows past the one a maximum was found at', () => {
    const c = collection();
    add(c, late(4.5));
    expectSameTop(c, ['r', 'c'], 1);
    // Longer documents raise the average length (10 → 14), and with it what 'c' adds to a
    // short document: a maximum found at the old average is now too low.
    for (let i = 0; i < 10_000; i++) add(c, { tf: new Map([['other', 1]]), length: 22 });
    expectSameTop(c, ['r', 'c'], 1);
    expect(winner(c)).toBe(20_000);
  });

});


describe('in-process text index: restored from a saved block', () => {

  it('answers as the index it was saved from, and keeps the block intact as restored lists grow', async () => {
    const count = 30_000;
    const original = build(count);
    const lengths = Float32Array.from(original.docs, (d) => (d as DocTerms).length);
    const packed = packPostings(original.index);
    const before = packed.pairs.slice();
    const restored = new TextIndex();
    await restored.restore(lengths, packed);
    expect(restored.termCount).toBe(original.index.termCount);
    const alive = original.alive;
    for (let q = 0; q < 30; q++) {
      const terms = query();
      expect(restored.search(terms, 20, alive, () => true)).toEqual(original.index.search(terms, 20, alive, () => true));
      for (const t of terms) expect(restored.docFrequency(t)).toBe(original.index.docFrequency(t));
    }
    // New documents grow restored lists (common and rare): both indexes take the same ones.
    const grown = new Uint8Array(count + 2_000);
    grown.set(alive);
    for (let slot = count; slot < count + 2_000; slot++) {
      const doc = makeDoc();
      original.index.add(slot, doc);
      restored.add(slot, doc);
      grown[slot] = 1;
    }
    for (let q = 0; q < 30; q++) {
      const terms = query();
      expect(restored.search(terms, 20, grown, () => true)).toEqual(original.index.search(terms, 20, grown, () => true));
    }
    expect([...restored.terms()].map(([t, p]) => [t, [...p]])).toEqual([...original.index.terms()].map(([t, p]) => [t, [...p]]));
    // Lists that grew moved to arrays of their own: the saved block was never written.
    expect(packed.pairs).toEqual(before);
  });
});

describe('in-process text index: renumbering in place', () => {
  /** The surviving documents, renumbered densely as `remap` says, in a collection of their own. */
  const renumbered = (c: Collection, remap: Int32Array, count: number): Collection => {
    const docs: (DocTerms | null)[] = new Array<DocTerms | null>(count).fill(null);
    c.docs.forEach((doc, old) => {
      if (doc && (remap[old] as number) >= 0) docs[remap[old] as number] = doc;
    });
    return { index: c.index, docs, alive: new Uint8Array(count).fill(1) };
  };
  const deadRemap = (c: Collection): { remap: Int32Array; count: number } => {
    const remap = new Int32Array(c.docs.length).fill(-1);
    let count = 0;
    c.docs.forEach((doc, old) => {
      if (doc) remap[old] = count++;
    });
    return { remap, count };
  };

  it('ranks after a compaction as BM25F over the surviving documents does, built and restored alike, and keeps taking new ones', async () => {
    const original = build(20_000, 3);
    const lengths = Float32Array.from(original.docs, (d) => d?.length ?? 0);
    const restored = new TextIndex();
    // Restored lists not yet read are renumbered where they lie in the saved block.
    await restored.restore(lengths, packPostings(original.index));
    for (let slot = 0; slot < 20_000; slot += 3) restored.remove(slot);
    for (const index of [original.index, restored]) {
      const { remap, count } = deadRemap(original);
      index.compact(remap, count);
      const after = renumbered({ ...original, index }, remap, count);
      for (let q = 0; q < 40; q++) expectSameTop(after, query(), 10);
      // New documents take the slots after the survivors, and rank with them.
      const grown: Collection = { index, docs: [...after.docs], alive: new Uint8Array(count + 500).fill(1) };
      for (let slot = count; slot < count + 500; slot++) {
        const doc = makeDoc();
        index.add(slot, doc);
        grown.docs.push(doc);
      }
      for (let q = 0; q < 40; q++) expectSameTop(grown, query(), 10);
      for (const [, pairs] of index.terms()) {
        for (let i = 2; i < pairs.length; i += 2) expect(pairs[i] as number).toBeGreaterThan(pairs[i - 2] as number);
      }
    }
  });

  it('renumbers each list when first read, sweeps the rest between turns, and takes a second renumbering before the sweep is done', async () => {
    const c = build(12_000, 4);
    const first = deadRemap(c);
    c.index.compact(first.remap, first.count);
    expect(c.index.sweeping).toBe(true);
    // Read before the sweep reached them: searches renumber the lists they read.
    const once = renumbered(c, first.remap, first.count);
    for (let q = 0; q < 20; q++) expectSameTop(once, query(), 10);
    // Half of the survivors die, and the index renumbers again before the sweep is done.
    for (let slot = 0; slot < first.count; slot += 2) {
      c.index.remove(slot);
      once.docs[slot] = null;
    }
    const second = deadRemap(once);
    c.index.compact(second.remap, second.count);
    const twice = renumbered({ ...once, index: c.index }, second.remap, second.count);
    for (let q = 0; q < 20; q++) expectSameTop(twice, query(), 10);
    while (c.index.sweeping) await new Promise((resolve) => setImmediate(resolve));
    for (let q = 0; q < 20; q++) expectSameTop(twice, query(), 10);
    // Every list, searched or swept, is in the last numbering.
    let postings = 0;
    for (const [, pairs] of c.index.terms()) {
      for (let i = 0; i < pairs.length; i += 2) expect(pairs[i] as number).toBeLessThan(second.count);
      postings += pairs.length / 2;
    }
    expect(postings).toBe(twice.docs.reduce((sum, doc) => sum + (doc?.tf.size ?? 0), 0));
  });
});
