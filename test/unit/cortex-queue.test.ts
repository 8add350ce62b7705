import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import { fitToBudget } from '../../packages/server/src/cortex/briefing-size.ts';
import { CompileLoop, type LoopOptions } from '../../packages/server/src/cortex/compile-loop.ts';
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

describe('many scopes pending', () => {
  it('knows the next due time without a walk of every scope on each write', () => {
    // 200,000 scopes, the next due time asked after every write (as the loop arms its timer):
    // a walk of the pending scopes each time was 2·10^10 steps (minutes); this takes well under a second.
    const q = new ScopeQueue(100);
    const started = performance.now();
    for (let i = 0; i < 200_000; i++) {
      q.touch('default', `p${i}`, 1000 + i);
      expect(q.nextDueIn(1000 + i)).toBe(i === 0 ? 100 : Math.max(0, 1100 - (1000 + i)));
    }
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(q.takeDue(1000 + 200_000 + 100)).toHaveLength(200_000);
    expect(q.nextDueIn(0)).toBeNull();
  });

  it('keeps the next due time exact as scopes are written again, delayed, released and taken', () => {
    const q = new ScopeQueue(100, 1000);
    q.touch('default', 'a', 0);
    q.touch('default', 'b', 50);
    expect(q.nextDueIn(50)).toBe(50); // a at 100
    q.touch('default', 'a', 80);
    expect(q.nextDueIn(80)).toBe(70); // b at 150, a now at 180
    q.touch('default', 'b', 90, 5000);
    expect(q.nextDueIn(90)).toBe(90); // a at 180, b waits until 5000
    expect(q.takeDue(180).map((s) => s.entityPath)).toEqual(['a']);
    expect(q.nextDueIn(180)).toBe(4820);
    q.release('default', 'b');
    expect(q.nextDueIn(180)).toBe(10); // b on its writes' clock again: 90 + 100
    for (let t = 200; t < 900; t += 10) q.touch('default', 'c', t);
    expect(q.nextDueIn(900)).toBe(0); // b overdue
    expect(q.takeDue(900).map((s) => s.entityPath)).toEqual(['b']);
    expect(q.nextDueIn(900)).toBe(90); // c: last write 890 + 100
    for (let t = 900; t < 1300; t += 10) q.touch('default', 'c', t);
    expect(q.nextDueIn(1290)).toBe(0); // c written without pause: due 1000 after its first write (200)
    q.clear();
    expect(q.nextDueIn(0)).toBeNull();
  });

  it('compiles every one of 200,000 scopes due at once', async () => {
    // Math.min(...due) over 200,000 scopes threw RangeError after they were taken from the
    // queue: they were lost until the next refresh or restart.
    let write: ((entry: Entry) => void) | null = null;
    const compiled = new Set<string>();
    const store = {
      changes: { subscribe: (cb: (entry: Entry) => void) => ((write = cb), () => {}), subscribeForgets: () => () => {} },
      listRecords: async () => [],
      listNamespaces: async () => [],
    };
    const compiler = {
      onExpiry: null,
      compileNamespace: async () => {},
      compilePaths: async (_ns: string, paths: Iterable<string>) => {
        for (const p of paths) compiled.add(p);
      },
      digestCount: () => 0,
      timedPaths: () => [],
    };
    const records = { namespaces: async () => [], rememberNamespace: async () => {} };
    const failures: unknown[] = [];
    const loop = new CompileLoop({
      store, records, compiler, logger: pino({ level: 'silent' }), debounceMs: 0, namespace: 'default', now: () => 1000, id: 'w',
      flushEvents: async () => {}, onFailure: () => failures.push(1),
    } as unknown as LoopOptions);
    loop.start();
    await loop.idle();
    for (let i = 0; i < 200_000; i++) (write as unknown as (entry: Entry) => void)({ namespace: 'default', entity_path: `p${i}` } as Entry);
    for (let t = 0; t < 200 && compiled.size < 200_000 && failures.length === 0; t++) {
      await new Promise((r) => setTimeout(r, 50));
      await loop.idle();
    }
    await loop.stop();
    expect(compiled.size).toBe(200_000);
    expect(failures).toEqual([]);
    expect(loop.queueDepth).toBe(0);
  }, 60_000);
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
