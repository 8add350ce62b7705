import { describe, expect, it } from 'vitest';
import type { Compiler } from '../../packages/server/src/cortex/compiler.ts';
import { compileSingly, type FallbackContext } from '../../packages/server/src/cortex/path-fallback.ts';
import { PathFailures } from '../../packages/server/src/cortex/path-failures.ts';

type Scope = { namespace: string; entityPath: string };
const scope = (entityPath: string): Scope => ({ namespace: 'default', entityPath });

/** A compiler whose compilePaths fails whenever `broken` holds one of the paths asked for (or every call when `down`). */
const fakeCompiler = (broken: Set<string>, state = { down: false, calls: [] as string[][] }) => ({
  compiler: {
    async compilePaths(_ns: string, paths: Iterable<string>): Promise<void> {
      const list = [...paths];
      state.calls.push(list);
      if (state.down || list.some((p) => broken.has(p))) throw new Error(`cannot compile ${list.join(',')}`);
    },
  } as unknown as Compiler,
  state,
});

/** The fallback over a fake compiler, recording what the loop would be told. */
const harness = (broken: Set<string>, failures = new PathFailures(() => 1000)) => {
  const fake = fakeCompiler(broken);
  const told = { worked: [] as string[], pathFailed: [] as string[], delays: [] as number[] };
  const ctx: FallbackContext = {
    compiler: fake.compiler,
    failures,
    running: () => true,
    interrupted: () => false,
    worked: (group) => {
      for (const d of group) failures.pathWorked(d.namespace, d.entityPath);
      failures.compiled();
      told.worked.push(...group.map((d) => d.entityPath));
    },
    pathFailed: (d, error) => {
      told.pathFailed.push(d.entityPath);
      told.delays.push(failures.pathFailed(d.namespace, d.entityPath, error).delay);
    },
  };
  return { ctx, failures, told, fake };
};

describe('Cortex path failures', () => {
  it('backs a poison path off on its own clock, without growing the shared (backend down) delay', () => {
    let now = 0;
    const f = new PathFailures(() => now);
    const delays: number[] = [];
    for (let i = 0; i < 6; i++) {
      now += 1000;
      delays.push(f.pathFailed('default', 'notes/poison', new Error('bad')).delay);
    }
    expect(delays).toEqual([2000, 4000, 8000, 16_000, 30_000, 30_000]);
    expect(f.has('default', 'notes/poison')).toBe(true);
    expect(f.has('default', 'notes/fine')).toBe(false);
    // Another path starts its own backoff from the first step, and so does the whole loop.
    expect(f.pathFailed('default', 'notes/other', new Error('bad')).delay).toBe(2000);
    expect(f.loopFailed(new Error('down')).delay).toBe(2000);
    // The failure under way counts every attempt, since the first.
    expect(f.failing).toMatchObject({ since: 1000, attempts: 8, error: 'down' });
  });

  it('grows the shared delay only while nothing works, and keeps the failure shown while a path still fails', () => {
    const f = new PathFailures(() => 0);
    expect([1, 2, 3].map(() => f.loopFailed(new Error('down')).delay)).toEqual([2000, 4000, 8000]);
    f.compiled();
    expect(f.loopFailed(new Error('down')).delay).toBe(2000);

    f.pathFailed('default', 'notes/poison', new Error('bad'));
    const before = f.attempts;
    f.jobWorked(before);
    expect(f.failing).not.toBeNull(); // the poison path is still retried alone
    f.pathWorked('default', 'notes/poison');
    f.jobWorked(before);
    expect(f.failing).toBeNull();
  });

  it('takes a first failure before anything worked as the backend down, a later one as a poison path', async () => {
    // The poison path comes first: nothing worked yet, so the round stops (the shared wait) and
    // the path is noted as failing; the path after it is left pending, not given up on.
    const first = harness(new Set(['notes/poison']));
    const items = [scope('notes/poison'), scope('notes/fine')];
    const pending = new Set(items);
    const whole = await compileSingly(first.ctx, items, pending);
    expect(whole?.at.entityPath).toBe('notes/poison');
    expect([...pending].map((d) => d.entityPath)).toEqual(['notes/fine']);
    expect(first.told.pathFailed).toEqual([]);
    expect(first.failures.has('default', 'notes/poison')).toBe(true);

    // Next round: the known failing path goes last and alone, the others compile first, and
    // its failure is its own (its own retry delay), not the backend's.
    const again = harness(new Set(['notes/poison']), first.failures);
    const retry = [scope('notes/poison'), scope('notes/fine'), scope('notes/also-fine')];
    const left = new Set(retry);
    expect(await compileSingly(again.ctx, retry, left)).toBeNull();
    expect(again.told.worked).toEqual(['notes/fine', 'notes/also-fine']);
    expect(again.told.pathFailed).toEqual(['notes/poison']);
    expect(again.told.delays).toEqual([4000]); // its second failure: 2 s doubled
    expect(again.fake.state.calls.at(-1)).toEqual(['notes/poison']);
    expect(left.size).toBe(0);
  });

  it('finds the poison path of a group one at a time, and compiles the rest of the group', async () => {
    const h = harness(new Set(['notes/b']));
    const items = ['notes/a', 'notes/b', 'notes/c'].map(scope);
    expect(await compileSingly(h.ctx, items, new Set(items))).toBeNull();
    expect(h.told.worked).toEqual(['notes/a', 'notes/c']);
    // Found failing this round, it is not compiled again in the same round (its own delay first).
    expect(h.told.pathFailed).toEqual(['notes/b']);
    expect(h.fake.state.calls).toEqual([['notes/a', 'notes/b', 'notes/c'], ['notes/a'], ['notes/b'], ['notes/c']]);
  });

  it('does not compile again, as a group, the job of the same paths that just failed', async () => {
    const h = harness(new Set(['notes/b']));
    const items = ['notes/a', 'notes/b', 'notes/c'].map(scope);
    expect(await compileSingly(h.ctx, items, new Set(items), true)).toBeNull();
    expect(h.fake.state.calls).toEqual([['notes/a'], ['notes/b'], ['notes/c']]);
    expect(h.told.pathFailed).toEqual(['notes/b']);
  });
});
