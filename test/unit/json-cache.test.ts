import { describe, expect, it } from 'vitest';
import { JsonCache } from '../../packages/server/src/http/serialize.ts';

describe('the cache of answered entries\' JSON', () => {
  it('keeps the latest texts within its bound, dropping the oldest first', () => {
    const cache = new JsonCache(1_000);
    const keys = Array.from({ length: 30 }, () => ({}));
    keys.forEach((key, i) => cache.set(key, `${i}`.padEnd(100, 'x')));
    expect(cache.chars).toBeLessThanOrEqual(1_000);
    // The last ten fit; everything before them is gone.
    expect(keys.slice(20).every((key) => cache.get(key) !== undefined)).toBe(true);
    expect(keys.slice(0, 20).some((key) => cache.get(key) !== undefined)).toBe(false);
    expect(cache.get(keys[29] as object)).toMatch(/^29x/);
  });

  it('does not hold a text larger than the whole bound, nor count one twice', () => {
    const cache = new JsonCache(100);
    const key = {};
    cache.set(key, 'x'.repeat(101));
    expect(cache.get(key)).toBeUndefined();
    cache.set(key, 'abc');
    cache.set(key, 'abc');
    expect(cache.chars).toBe(3);
  });
});
