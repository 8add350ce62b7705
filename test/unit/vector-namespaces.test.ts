import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { BuiltinEmbedder } from '../../packages/server/src/embed/builtin-embedder.ts';
import { MemorySearchIndex } from '../../packages/server/src/search/memory-index.ts';
import { random } from '../../packages/server/src/search/seeded-random.ts';
import { TRAIN_AT } from '../../packages/server/src/search/ivf-lists.ts';
import { VectorIndex } from '../../packages/server/src/search/vector-index.ts';
import { TopK } from '../../packages/server/src/search-rules/top-k.ts';
import { searchCorpus, searchQueries } from '../../bench/lib/search-corpus.ts';

/** Slots of `slots` ranked by the exact dot product of their stored vectors with `query` (normalized), best first. */
const exactly = (index: VectorIndex, slots: Iterable<number>, query: Float32Array, n: number): { slot: number; score: number }[] => {
  const norm = Math.sqrt(query.reduce((s, x) => s + x * x, 0));
  const q = query.map((x) => x / norm);
  const top = new TopK(n);
  for (const slot of slots) {
    const v = index.vectorOf(slot);
    if (!v) continue;
    let dot = 0;
    for (let d = 0; d < v.length; d++) dot += (v[d] as number) * (q[d] as number);
    top.push(slot, dot);
  }
  return top.sorted();
};

const whenListed = async (index: VectorIndex): Promise<void> => {
  while (!index.listed) await new Promise((resolve) => setTimeout(resolve, 20));
};

describe('vector search in one namespace of a store of many', () => {
  it('answers a small namespace exactly, whatever the other namespaces hold (built-in embedder, 2k beside 43k)', async () => {
    const embedder = new BuiltinEmbedder();
    const index = MemorySearchIndex.over([], embedder, pino({ level: 'silent' }));
    const all = [...searchCorpus(45_000)];
    for (const e of all.slice(0, 2_000)) index.apply(e);
    for (const e of all.slice(2_000)) index.apply({ ...e, namespace: 'other' });
    await index.settled();
    const vectors = index.vectors as VectorIndex;
    await whenListed(vectors);
    const mine: number[] = [];
    for (let slot = 0; slot < index.slots.size; slot++) if (index.slots.entry(slot)?.namespace === 'default') mine.push(slot);
    expect(mine.length).toBe(2_000);
    const queries = await embedder.embed(searchQueries().slice(0, 100));
    const filter = { namespace: 'default', now: Date.now() };
    let differ = 0;
    for (const q of queries) {
      const got = (await index.vectorCandidates(q, filter, 10)).map((c) => `${c.entry.entity_path}/${c.entry.key}:${c.score}`);
      const want = exactly(vectors, mine, q, 10).map((h) => {
        const e = index.slots.entry(h.slot);
        return `${e?.entity_path}/${e?.key}:${h.score}`;
      });
      if (got.join() !== want.join()) differ += 1;
    }
    expect(differ).toBe(0);
    await index.close();
  }, 60_000);

  it('keeps its per-namespace counts through deletes, renumberings and reused rows', async () => {
    const dim = 16;
    const rand = random(7);
    const vector = () => Float32Array.from({ length: dim }, () => rand() - 0.5);
    const count = 3 * TRAIN_AT;
    const index = new VectorIndex('test', dim);
    // Namespace 2 (small) interleaved with namespace 1 (large): every 20th slot.
    let spaces = new Uint16Array(count).map((_, slot) => (slot % 20 === 3 ? 2 : 1));
    const vectors = Array.from({ length: count }, vector);
    vectors.forEach((v, slot) => index.set(slot, v));
    await whenListed(index);
    let alive = new Uint8Array(count).fill(1);
    const check = (size: number): void => {
      const small: number[] = [];
      for (let slot = 0; slot < size; slot++) if (spaces[slot] === 2 && alive[slot] === 1 && index.holds(slot)) small.push(slot);
      for (let i = 0; i < 20; i++) {
        const q = vector();
        const got = index.search(q, 10, alive, (slot) => spaces[slot] === 2, { spaces, code: 2 });
        expect(got).toEqual(exactly(index, small, q, 10));
      }
    };
    check(count);
    // Deletes, then a renumbering that drops every third slot, then new vectors in the rows freed.
    for (let slot = 3; slot < count; slot += 40) index.delete(slot);
    check(count);
    const remap = new Int32Array(count).fill(-1);
    let kept = 0;
    for (let old = 0; old < count; old++) if (old % 3 !== 0) remap[old] = kept++;
    index.compact(remap, kept);
    const moved = new Uint16Array(count + 5_000);
    remap.forEach((to, old) => {
      if (to >= 0) moved[to] = spaces[old] as number;
    });
    spaces = moved;
    alive = new Uint8Array(count + 5_000).fill(1, 0, kept);
    for (let slot = kept; slot < kept + 5_000; slot++) {
      spaces[slot] = slot % 2 === 0 ? 2 : 1;
      alive[slot] = 1;
      index.set(slot, vector());
    }
    check(kept + 5_000);
    // Restored with its lists (rows then in a plain array, scanned in JS): counted again from the rows.
    const size = kept + 5_000;
    const data = new Float32Array(size * dim);
    const has = new Uint8Array(size);
    for (let slot = 0; slot < size; slot++) {
      const v = index.vectorOf(slot);
      if (v) {
        data.set(v, slot * dim);
        has[slot] = 1;
      }
    }
    const filing = index.filing();
    const restored = new VectorIndex('test', dim);
    restored.restore(data, has, filing && { quantizer: filing.quantizer, lists: [...filing.lists] });
    expect(restored.listed).toBe(true);
    const small: number[] = [];
    for (let slot = 0; slot < size; slot++) if (spaces[slot] === 2 && has[slot] === 1) small.push(slot);
    for (let i = 0; i < 10; i++) {
      const q = vector();
      expect(restored.search(q, 10, alive, (slot) => spaces[slot] === 2, { spaces, code: 2 })).toEqual(exactly(restored, small, q, 10));
    }
  }, 60_000);

  it('scans a large namespace beside a larger one until it has read enough of its own vectors', async () => {
    const dim = 16;
    const rand = random(11);
    const centers = Array.from({ length: 40 }, () => Float32Array.from({ length: dim }, () => rand() - 0.5));
    // Namespace 1 on topics 0-19, namespace 2 on topics 20-39 with a few of 0-19.
    const vector = (topic: number) => Float32Array.from(centers[topic] as Float32Array, (x) => x + (rand() - 0.5) * 0.4);
    const big = 120_000;
    const mid = TRAIN_AT + 4_000;
    const spaces = new Uint16Array(big + mid).map((_, slot) => (slot < big ? 1 : 2));
    const index = new VectorIndex('test', dim);
    for (let slot = 0; slot < big; slot++) index.set(slot, vector(slot % 20));
    for (let slot = big; slot < big + mid; slot++) index.set(slot, vector(slot % 10 === 0 ? slot % 20 : 20 + (slot % 20)));
    await whenListed(index);
    const alive = new Uint8Array(big + mid).fill(1);
    const mine = Array.from({ length: mid }, (_, i) => big + i);
    let found = 0;
    for (let i = 0; i < 50; i++) {
      // Queries on the topics namespace 2 shares with namespace 1: its few vectors there are the answers.
      const q = vector(i % 20);
      const got = new Set(index.search(q, 10, alive, (slot) => spaces[slot] === 2, { spaces, code: 2 }).map((h) => h.slot));
      found += exactly(index, mine, q, 10).filter((h) => got.has(h.slot)).length;
    }
    // Measured: 0.92 when the lists nearest the query are read whatever their namespace, 0.98 here.
    expect(found / 500).toBeGreaterThanOrEqual(0.96);
  }, 60_000);
});
