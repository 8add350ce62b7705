import { describe, expect, it } from 'vitest';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import type { Store } from '../../packages/server/src/ports/store.ts';
import { ObjectKeys, addressHash } from '../../packages/server/src/store/s3/object-keys.ts';
import { makeEntry } from '../contract/store-contract.ts';
import { useS3Bucket } from '../helpers/s3-bucket.ts';

/**
 * A forget lists the change log once, and the compaction the forget service runs after it
 * (forget-entries.ts) lists only the log's tail, not the whole log twice more: LIST requests
 * are counted at the proxy in front of s3rver (1,000 keys a page).
 */
/** Entries written before the forget, besides the three below them. */
const BULK = 2000;
const addr = (e: Entry) => ({ namespace: e.namespace, entity_path: e.entity_path, key: e.key });

describe('S3: a forget lists the change log once', () => {
  const bucket = useS3Bucket();

  /** The LIST requests of the change log `run` sends: whole (no start-after) and in all. */
  const changeLists = async (keys: ObjectKeys, run: () => Promise<unknown>) => {
    const prefix = `prefix=${encodeURIComponent(keys.changesPrefix)}`;
    const lists: string[] = [];
    bucket.proxy.onRequest = (method, url) => {
      if (method === 'GET' && url.includes('list-type=2') && url.includes(prefix)) lists.push(url);
    };
    try {
      await run();
    } finally {
      bucket.proxy.onRequest = null;
    }
    return { whole: lists.filter((url) => !url.includes('start-after=')).length, all: lists.length };
  };

  const changeKeys = async (keys: ObjectKeys): Promise<string[]> => {
    const all: string[] = [];
    for await (const page of bucket.objects.list(keys.changesPrefix)) all.push(...page);
    return all;
  };
  const named = (keys: ObjectKeys, list: string[]) =>
    list.map((k) => {
      const of = keys.parseChange(k)?.of;
      return of ? `${of.hash}@${of.version}` : 'unnamed';
    });

  const update = async (store: Store, entry: Entry): Promise<Entry> => {
    const next = makeEntry({ ...addr(entry), version: entry.version + 1, created_at: entry.created_at });
    await store.append(next, entry.version);
    return next;
  };

  it('forget and the compaction after it: one whole listing, and compaction still deletes what it should', async () => {
    const prefix = 'forget-lists/';
    const keys = new ObjectKeys(prefix);
    // A lookback of 1 ms, so that the compaction may delete superseded copies at once.
    const store = await bucket.open(prefix, { lookbackMs: 1 });
    // With the three changes written below, just over two listing pages of 1,000 keys: the
    // forget lists three pages. Each entry is two S3 writes, so the log is no longer than that.
    const bulk = Array.from({ length: BULK }, (_, i) => makeEntry({ namespace: 'l', entity_path: 'bulk', key: `k${i}` }));
    for (let i = 0; i < bulk.length; i += 100) await store.appendBatch(bulk.slice(i, i + 100).map((entry) => ({ entry, expectedHead: 0 })));
    const target = makeEntry({ namespace: 'l', entity_path: 'people/alice', key: 'note', value: 'secret' });
    await store.append(target, 0);
    const targetV2 = await update(store, target);
    // Superseded before the forget: its v1 copy is listed by the forget.
    const before = await update(store, bulk[0] as Entry);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const pages = Math.ceil((await changeKeys(keys)).length / 1000);
    expect(pages).toBe(3);
    // The replica's own follower catches up first (the forget's sync then lists a page).
    await store.list({ namespace: 'l', limit: 1, now: Date.now() });

    const forget = await changeLists(keys, () => store.forget({ namespace: 'l', prefix: 'people/alice' }));
    // Superseded after the forget (its v1 copy was listed by it), and a new entry's copies (only in the tail).
    const after = await update(store, bulk[1] as Entry);
    const fresh = makeEntry({ namespace: 'l', entity_path: 'new', key: 'n' });
    await store.append(fresh, 0);
    const freshV2 = await update(store, fresh);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const compaction = await changeLists(keys, () => store.compact());

    // One whole listing per forget, and none by the compaction after it.
    expect(forget.whole).toBe(1);
    expect(compaction.whole).toBe(0);
    expect(forget.all + compaction.all).toBeLessThanOrEqual(pages + 4);

    const left = named(keys, await changeKeys(keys));
    const hash = addressHash(target);
    expect(left.filter((n) => n.startsWith(hash))).toEqual([]);
    expect(await store.head(addr(targetV2))).toBeNull();
    for (const gone of [before, after, freshV2]) expect(left).not.toContain(`${addressHash(gone)}@1`);
    for (const kept of [before, after, freshV2]) expect(left).toContain(`${addressHash(kept)}@2`);
    // Every other entry's one copy, the three updated entries' newest and the forget's notice.
    expect(left).toHaveLength(BULK + 1 + 1);
    expect((await store.list({ namespace: 'l', prefix: 'bulk', limit: 3, now: Date.now() })).entries.map((e) => e.version)).toEqual([2, 2, 1]);
  // Its set-up writes 2,000 entries to S3 (three listing pages of the change log): 23–28 s in a
  // full run here, past the 30 s default on a loaded host.
  }, 90_000);

  it('a compaction not after a forget lists the whole log, as before', async () => {
    const prefix = 'compact-lists/';
    const keys = new ObjectKeys(prefix);
    const store = await bucket.open(prefix, { lookbackMs: 1 });
    const e = makeEntry({ namespace: 'c', entity_path: 'p', key: 'k' });
    await store.append(e, 0);
    const e2 = await update(store, e);
    await store.forget({ namespace: 'c', prefix: 'other' });
    await store.compact();
    // The forget's listing serves one compaction only.
    const second = await update(store, e2);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await changeLists(keys, () => store.compact())).whole).toBe(1);
    expect(named(keys, await changeKeys(keys)).sort()).toEqual([`${addressHash(second)}@3`, 'unnamed'].sort());
  });
});
