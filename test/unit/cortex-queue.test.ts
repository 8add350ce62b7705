import { describe, expect, it } from 'vitest';
import { fitToBudget } from '../../packages/server/src/cortex/briefing-size.ts';
import { ScopeQueue } from '../../packages/server/src/cortex/scope-queue.ts';

describe('per-scope debounce', () => {
  it('makes a scope due a debounce after its last write, and each scope on its own clock', () => {
    const q = new ScopeQueue(1000);
    for (let t = 0; t <= 900; t += 100) q.touch('default', 'a', t);
    q.touch('default', 'b', 500);
    expect(q.nextDueIn(900)).toBe(600); // b: 500 + 1000
    expect(q.takeDue(1499)).toEqual([]);
    expect(q.takeDue(1500).map((s) => s.entityPath)).toEqual(['b']);
    expect(q.takeDue(1899)).toEqual([]);
    expect(q.takeDue(1900)).toEqual([{ namespace: 'default', entityPath: 'a', first: 0 }]);
    expect(q.size).toBe(0);
  });

  it('still compiles a scope written without pause, every ten debounces', () => {
    const q = new ScopeQueue(1000);
    let compiled = 0;
    for (let t = 0; t < 30_000; t += 50) {
      q.touch('default', 'busy', t);
      compiled += q.takeDue(t).length;
    }
    expect(compiled).toBe(2);
    expect(q.oldestWaitMs(30_000)).toBeLessThanOrEqual(10_000);
  });

  it('keeps a failing scope waiting out its retry delay, whatever its writes, until released', () => {
    const q = new ScopeQueue(100);
    q.touch('default', 'poison', 0, 5000);
    q.touch('default', 'poison', 200);
    q.touch('default', 'fine', 200);
    expect(q.takeDue(300).map((s) => s.entityPath)).toEqual(['fine']);
    expect(q.nextDueIn(300)).toBe(4700);
    expect(q.takeDue(4999)).toEqual([]);
    q.release('default', 'poison');
    expect(q.takeDue(4999)).toEqual([{ namespace: 'default', entityPath: 'poison', first: 0 }]);
  });
});

describe('briefing budget', () => {
  it('drops digest facts first, then the longest lists, and reports its exact size', () => {
    const briefing = {
      digests: [{ scope: 'path:a', headline: 'h', facts: { big: 'x'.repeat(2000) } }],
      recent_changes: Array.from({ length: 50 }, (_, i) => ({ key: `k${i}`, summary: 'y'.repeat(40) })),
      open_items: [{ key: 'o1' }],
    };
    const fitted = fitToBudget(briefing, 1200, ['recent_changes', 'open_items', 'digests']);
    expect(fitted.truncated).toBe(true);
    expect(fitted.digests[0]).not.toHaveProperty('facts');
    expect(fitted.open_items).toHaveLength(1);
    expect(fitted.recent_changes.length).toBeLessThan(50);
    expect(JSON.stringify(fitted).length).toBe(fitted.size_chars);
    expect(fitted.size_chars).toBeLessThanOrEqual(1200);
  });
});
