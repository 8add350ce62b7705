import { describe, expect, it } from 'vitest';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import type { ListQuery } from '../../packages/server/src/ports/store.ts';
import type { Context, ServiceDeps } from '../../packages/server/src/services/context.ts';
import { listEntries } from '../../packages/server/src/services/list-entries.ts';
import { HeadTree, LIST_SCAN_HEADS } from '../../packages/server/src/store/head-tree.ts';

/**
 * A filtered list over many heads (`since` a recent time, an agent with no entries) examines a
 * bounded number of heads per call, so it cannot block the event loop for a walk of every head:
 * it answers a short page, maybe empty, with a cursor, and paging on reaches every match.
 */
const OLD = '2026-01-01T00:00:00.000Z';
const NEW = '2026-06-01T00:00:00.000Z';
const HEADS = 2 * LIST_SCAN_HEADS + 5_000;
/** The heads written recently (and by agent "rare"), spread over the walk, the bound's edges included. */
const RECENT = new Set([0, 3, LIST_SCAN_HEADS - 1, LIST_SCAN_HEADS, LIST_SCAN_HEADS + 1, 17_000, HEADS - 1]);

const keyOf = (i: number): string => `k${String(i).padStart(6, '0')}`;
const entry = (i: number): Entry =>
  ({
    namespace: 'ns', entity_path: `big/p${i % 7}`, key: keyOf(i), version: 1, value: 'v', agent_id: RECENT.has(i) ? 'rare' : 'bulk',
    written_at: RECENT.has(i) ? NEW : OLD, expires_at: null, deleted: false, links: [],
  }) as unknown as Entry;

/** A tree of HEADS heads, and a count of the heads each list call examined. */
const setUp = () => {
  let examined = 0;
  const tree = new HeadTree<Entry>((e) => {
    examined += 1;
    return e;
  });
  for (let i = 0; i < HEADS; i++) tree.set({ namespace: 'ns', entity_path: `big/p${i % 7}`, key: keyOf(i) }, entry(i));
  tree.finishBulk();
  const perCall: number[] = [];
  const store = {
    list: async (query: ListQuery) => {
      examined = 0;
      const page = tree.list(query);
      perCall.push(examined);
      return page;
    },
  };
  const deps = { store, now: () => Date.parse('2026-07-01T00:00:00Z') } as unknown as ServiceDeps;
  const ctx: Context = { requestId: 'r', namespace: 'ns', agentId: 'tester' };
  return { tree, deps, ctx, perCall };
};

/** Every page of a list, following next_cursor until it is null. */
const pages = async (deps: ServiceDeps, ctx: Context, query: Record<string, unknown>) => {
  const out: { keys: string[]; cursor: string | null }[] = [];
  let cursor: string | undefined;
  do {
    const page = await listEntries(deps, ctx, { ...query, ...(cursor ? { cursor } : {}) });
    out.push({ keys: page.entries.map((e) => e.key), cursor: page.next_cursor });
    cursor = page.next_cursor ?? undefined;
    expect(out.length).toBeLessThan(20);
  } while (cursor);
  return out;
};

const recentKeys = [...RECENT].map((i) => `big/p${i % 7} ${keyOf(i)}`).sort().map((s) => s.split(' ')[1]);

describe('lists bound the heads they examine per page', () => {
  it('answers a `since` list over many heads a page at a time, with a cursor, and paging reaches every match', async () => {
    const { deps, ctx, perCall } = setUp();
    const all = await pages(deps, ctx, { entity_path: 'big', since: NEW, limit: 100 });
    // Stopped by the bound, not by the end: a cursor, though fewer than `limit` entries matched so far.
    expect(all[0]?.cursor).not.toBeNull();
    expect(all[0]?.keys.length).toBeLessThan(RECENT.size);
    expect(all.flatMap((p) => p.keys)).toEqual(recentKeys);
    expect(all.length).toBe(Math.ceil(HEADS / LIST_SCAN_HEADS));
    // Each call to the store examined at most the bound (plus the head that proves there is more).
    expect(Math.max(...perCall)).toBeLessThanOrEqual(LIST_SCAN_HEADS + 1);
  });

  it('answers an agent with no entries empty pages with a cursor, then the end', async () => {
    const { deps, ctx, perCall } = setUp();
    const all = await pages(deps, ctx, { agent_id: 'nobody', limit: 1000 });
    expect(all.map((p) => p.keys.length)).toEqual(all.map(() => 0));
    expect(all.map((p) => p.cursor === null)).toEqual(all.map((_, i) => i === all.length - 1));
    expect(all.length).toBe(Math.ceil(HEADS / LIST_SCAN_HEADS));
    expect(Math.max(...perCall)).toBeLessThanOrEqual(LIST_SCAN_HEADS + 1);
  });

  it('pages an unfiltered list whole and in order, the bound never cutting a full page short', async () => {
    const { deps, ctx } = setUp();
    const all = await pages(deps, ctx, { entity_path: 'big/p3', limit: 1000 });
    const expected = Array.from({ length: HEADS }, (_, i) => i).filter((i) => i % 7 === 3).map(keyOf);
    expect(all.flatMap((p) => p.keys)).toEqual(expected);
    expect(all.slice(0, -1).every((p) => p.keys.length === 1000)).toBe(true);
  });

  it('ends with a null cursor when the walk ends exactly at the bound', () => {
    const { tree } = setUp();
    const now = Date.parse('2026-07-01T00:00:00Z');
    const query = { namespace: 'ns', prefix: 'big/p0', agentId: 'nobody', limit: 10, now };
    const under = Math.ceil(HEADS / 7);
    expect(tree.list(query, under)).toEqual({ entries: [], next: null });
    const cut = tree.list(query, under - 1);
    expect(cut.entries).toEqual([]);
    expect(cut.next).not.toBeNull();
    expect(tree.list({ ...query, after: cut.next ?? undefined }, under - 1)).toEqual({ entries: [], next: null });
  });
});
