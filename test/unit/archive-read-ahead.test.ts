import { describe, expect, it } from 'vitest';
import { readAhead } from '../../packages/server/src/services/archive/read-ahead.ts';

/**
 * The export's read-ahead (read-ahead.ts): items read at once finish in any order, yet come out
 * in theirs, each item's chunks in theirs; the bounds hold; a failure surfaces where reading in
 * turn would have met it.
 */
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const from = async function* <T>(items: T[]): AsyncGenerator<T> {
  yield* items;
};

describe('reading ahead in order', () => {
  it('gives items and chunks in order when later items finish first, within the bounds', async () => {
    let reading = 0;
    let most = 0;
    // Item i has i % 3 + 1 chunks; the earlier an item, the slower its reads.
    const open = async function* (i: number): AsyncGenerator<string> {
      for (let c = 0; c < (i % 3) + 1; c++) {
        reading++;
        most = Math.max(most, reading);
        await sleep((20 - i) * 2);
        reading--;
        yield `${i}.${c}`;
      }
    };
    const got: string[] = [];
    for await (const { item, chunks } of readAhead(from(Array.from({ length: 20 }, (_, i) => i)), { open, size: () => 1, guess: () => 1 }, { items: 6, size: 100 })) {
      for await (const chunk of chunks) got.push(`${item}:${chunk}`);
    }
    expect(got).toEqual(Array.from({ length: 20 }, (_, i) => Array.from({ length: (i % 3) + 1 }, (_, c) => `${i}:${i}.${c}`)).flat());
    expect(most).toBeGreaterThan(1);
    expect(most).toBeLessThanOrEqual(6);
  });

  it('starts no read ahead past the size bound, but always reads the item being consumed', async () => {
    const started: number[] = [];
    const open = async function* (i: number): AsyncGenerator<number> {
      started.push(i);
      yield i;
    };
    const ahead = async (bound: number): Promise<number[]> => {
      started.length = 0;
      const counts: number[] = [];
      for await (const { item, chunks } of readAhead(from([0, 1, 2, 3, 4, 5]), { open, size: () => 10, guess: () => 10 }, { items: 6, size: bound })) {
        await sleep(5);
        // Items started beyond the one being consumed, each holding a chunk of 10.
        counts.push(started.filter((i) => i > item).length);
        for await (const chunk of chunks) expect(chunk).toBe(item);
      }
      expect(started).toEqual([0, 1, 2, 3, 4, 5]);
      return counts;
    };
    // The chunk of the item being consumed is held (10): one more fits 25, a third does not; 15 fits none.
    expect(Math.max(...(await ahead(25)))).toBe(1);
    expect(Math.max(...(await ahead(15)))).toBe(0);
    expect(Math.max(...(await ahead(1000)))).toBe(5);
  });

  it('throws a failure of a later item only when it is reached, after the items before it', async () => {
    const open = async function* (i: number): AsyncGenerator<number> {
      if (i === 3) throw new Error('item 3 failed');
      await sleep(10);
      yield i;
    };
    const got: number[] = [];
    const run = async () => {
      for await (const { chunks } of readAhead(from([0, 1, 2, 3, 4]), { open, size: () => 1, guess: () => 1 }, { items: 5, size: 100 })) {
        for await (const chunk of chunks) got.push(chunk);
      }
    };
    await expect(run()).rejects.toThrow('item 3 failed');
    expect(got).toEqual([0, 1, 2]);
  });

  it('throws a failure of the items themselves after the items read before it', async () => {
    const items = async function* (): AsyncGenerator<number> {
      yield 0;
      yield 1;
      throw new Error('scan failed');
    };
    const got: number[] = [];
    const run = async () => {
      for await (const { chunks } of readAhead(items(), { open: (i) => from([i]), size: () => 1, guess: () => 1 }, { items: 4, size: 100 })) {
        for await (const chunk of chunks) got.push(chunk);
      }
    };
    await expect(run()).rejects.toThrow('scan failed');
    expect(got).toEqual([0, 1]);
  });
});
