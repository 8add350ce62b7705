import { describe, expect, it } from 'vitest';
import { TopK } from '../../packages/server/src/search-rules/top-k.ts';

/** The k best of `scores` by sorting them all: best first, ties by the lower id. */
const reference = (scores: number[], k: number) =>
  scores
    .map((score, slot) => ({ slot, score }))
    .sort((a, b) => b.score - a.score || a.slot - b.slot)
    .slice(0, k);

describe('the top k of a scan', () => {
  it('keeps exactly the k best, ties and all, for k below and above its first allocation', () => {
    // Scores from a small set of values, so that ties are everywhere.
    const scores = Array.from({ length: 5_000 }, (_, i) => ((i * 7919) % 97) / 97);
    for (const k of [1, 10, 256, 257, 1_000, 6_000]) {
      const top = new TopK(k);
      scores.forEach((score, slot) => top.push(slot, score));
      const kept = top.sorted();
      expect(kept.map((r) => r.score), `k = ${k}`).toEqual(reference(scores, k).map((r) => r.score));
      expect(top.size).toBe(Math.min(k, scores.length));
      expect(top.bar).toBe(k > scores.length ? -Infinity : (kept.at(-1)?.score ?? -Infinity));
    }
  });

  it('answers the bar a scan reads, and starts again empty after clear', () => {
    const top = new TopK(3);
    expect(top.bar).toBe(-Infinity);
    for (const [slot, score] of [[1, 0.5], [2, 0.9], [3, 0.1], [4, 0.7]] as const) top.push(slot, score);
    expect(top.bar).toBe(0.5);
    expect(top.wouldTake(0.5)).toBe(false);
    expect(top.sorted()).toEqual([{ slot: 2, score: 0.9 }, { slot: 4, score: 0.7 }, { slot: 1, score: 0.5 }]);
    top.clear();
    expect([top.size, top.bar]).toEqual([0, -Infinity]);
  });
});
