import { describe, expect, it } from 'vitest';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import { CLOCK_MARGIN_MS } from '../../packages/server/src/services/archive/archived-history.ts';
import { BACKWARDS_MARGIN_MS, walkBackTo } from '../../packages/server/src/store/as-of.ts';
import { makeEntry } from '../contract/store-contract.ts';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const MINUTE = 60_000;

/** An entry's history: version v (1-based) written at times[v - 1]; versions up to `floor` dropped. */
const history = (times: number[], floor = 0) => {
  const versions = times.map((t, i) => makeEntry({ version: i + 1, written_at: new Date(t).toISOString() }));
  const reads: number[] = [];
  const read = async (v: number): Promise<Entry | null> => {
    reads.push(v);
    return v > floor ? (versions[v - 1] ?? null) : null;
  };
  const head = versions[versions.length - 1] as Entry;
  /** What walking down from the head one version at a time answers: the contract's answer. */
  const expected = (at: number): number | null => {
    for (let v = head.version; v > floor; v--) if (Date.parse((versions[v - 1] as Entry).written_at) <= at) return v;
    return null;
  };
  return { versions, reads, read, head, expected };
};

const log2 = (n: number): number => Math.ceil(Math.log2(n));

describe('walking an entry back to a past instant', () => {
  it('keeps the margin imports allow a version to run backwards', () => {
    expect(BACKWARDS_MARGIN_MS).toBe(CLOCK_MARGIN_MS);
  });

  it('finds the version of an instant deep in a long history in a few dozen reads, not one per version since', async () => {
    // 20,000 versions ten minutes apart (an entry rewritten all year), the oldest 5,000 dropped.
    const h = history(Array.from({ length: 20_000 }, (_, i) => T0 + i * 10 * MINUTE), 5_000);
    for (const v of [5_001, 5_002, 7_777, 12_345, 19_999]) {
      for (const at of [T0 + (v - 1) * 10 * MINUTE, T0 + (v - 1) * 10 * MINUTE + 5 * MINUTE]) {
        h.reads.length = 0;
        expect((await walkBackTo(h.head, at, h.read))?.version).toBe(v);
        expect(h.reads.length).toBeLessThanOrEqual(3 * log2(20_000));
      }
    }
  });

  it('reads one version for an entry changed once since the instant, as the walk did', async () => {
    const h = history(Array.from({ length: 20_000 }, (_, i) => T0 + i * 10 * MINUTE));
    expect((await walkBackTo(h.head, T0 + 19_998 * 10 * MINUTE, h.read))?.version).toBe(19_999);
    expect(h.reads).toEqual([19_999]);
  });

  it('answers nothing before the oldest kept version, reading a few of the dropped ones', async () => {
    const h = history(Array.from({ length: 20_000 }, (_, i) => T0 + i * 10 * MINUTE), 5_000);
    for (const at of [T0 - MINUTE, T0, T0 + 4_999 * 10 * MINUTE]) {
      h.reads.length = 0;
      expect(await walkBackTo(h.head, at, h.read)).toBeNull();
      expect(h.reads.length).toBeLessThanOrEqual(3 * log2(20_000));
    }
    // A history that is all head: nothing older to read.
    const one = history([T0]);
    expect(await walkBackTo(one.head, T0 - 1, one.read)).toBeNull();
    expect((await walkBackTo(one.head, T0, one.read))?.version).toBe(1);
    expect(one.reads).toEqual([]);
  });

  it('with no margin (histories that never run backwards), gallops and bisects in about 2·log2(versions) reads', async () => {
    const h = history(Array.from({ length: 20_000 }, (_, i) => T0 + i * 1_000), 5_000);
    for (const v of [5_001, 10_000, 19_999]) {
      h.reads.length = 0;
      expect((await walkBackTo(h.head, T0 + (v - 1) * 1_000, h.read, 0))?.version).toBe(v);
      expect(h.reads.length).toBeLessThanOrEqual(2 * log2(20_000) + 1);
    }
  });

  it('answers as the walk down from the head does for histories that run backwards within the margin', async () => {
    // Deterministic pseudo-random histories: each version up to 5 minutes before or up to 3
    // minutes after the one before it (an import of an archive from replicas whose clocks
    // disagreed), some with their oldest versions dropped; every instant across each one.
    let seed = 42;
    const random = (): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let run = 0; run < 200; run++) {
      const length = 1 + Math.floor(random() * 40);
      const times = [T0];
      for (let i = 1; i < length; i++) times.push((times[i - 1] as number) + Math.round((random() * 8 - 5) * MINUTE));
      const floor = random() < 0.3 ? Math.floor(random() * length) - 1 : 0;
      const h = history(times, Math.max(0, Math.min(floor, length - 1)));
      const lowest = Math.min(...times) - MINUTE;
      const highest = Math.max(...times) + MINUTE;
      for (let at = lowest; at <= highest; at += 15_000) {
        expect((await walkBackTo(h.head, at, h.read))?.version ?? null, `run ${run} at ${at - T0}`).toBe(h.expected(at));
      }
      // And at each version's own instant, where ties sit.
      for (const t of times) expect((await walkBackTo(h.head, t, h.read))?.version ?? null).toBe(h.expected(t));
    }
  });
});
