import { describe, expect, it } from 'vitest';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import type { Store } from '../../packages/server/src/ports/store.ts';
import { ObjectKeys, addressHash } from '../../packages/server/src/store/s3/object-keys.ts';
import { mapLimit } from '../../packages/server/src/domain/map-limit.ts';
import { makeEntry } from '../contract/store-contract.ts';
import { useS3Bucket } from '../helpers/s3-bucket.ts';
import { keysGot } from '../helpers/s3-gets.ts';

/**
 * Change-log keys of entry changes name the entry (address hash) and version, so that a forget
 * reads only the change objects that may be theirs, not one per entry in the bucket, and a
 * compaction judges them by their keys alone, reading none. GETs are counted by a pass-through spy on BucketObjects (every GET of the store goes
 * through `getObject`).
 */
const addr = (e: Entry) => ({ namespace: e.namespace, entity_path: e.entity_path, key: e.key });
/** The change-key pattern of the code before keys named their versions (object-keys.ts then). */
const PREVIOUS_CHANGE_NAME = /^(\d{13})-([0-9a-f]+)-\d+\.json$/;

describe('S3: change keys name their entry and version', () => {
  const bucket = useS3Bucket();
  const open = (prefix: string, lookbackMs?: number): Promise<Store> => bucket.open(prefix, { lookbackMs });

  const changeKeys = async (keys: ObjectKeys): Promise<string[]> => {
    const all: string[] = [];
    for await (const page of bucket.objects.list(keys.changesPrefix)) all.push(...page);
    return all;
  };

  /** The change-log keys `run` GETs. */
  const changeGets = (keys: ObjectKeys, run: () => Promise<unknown>): Promise<string[]> => keysGot((key) => key.startsWith(keys.changesPrefix), run);

  /** Writes `versions` versions of the entry; answers the last. */
  const write = async (store: Store, address: ReturnType<typeof addr>, versions: number, value = (v: number): Entry['value'] => ({ v })) => {
    let last: Entry | undefined;
    for (let v = 1; v <= versions; v++) {
      last = makeEntry({ ...address, version: v, value: value(v), created_at: last?.created_at });
      await store.append(last, v - 1);
    }
    return last as Entry;
  };

  /** What each change key names: `hash@version`, or `unnamed` (a notice, a change written before keys named versions). */
  const named = (keys: ObjectKeys, list: string[]) =>
    list.map((k) => {
      const of = keys.parseChange(k)?.of;
      return of ? `${of.hash}@${of.version}` : 'unnamed';
    });

  it('names an entry change in the shape earlier replicas read, in sequence order with notices', () => {
    const keys = new ObjectKeys('shape/');
    const hash = addressHash({ namespace: 'n', entity_path: 'a/b', key: 'k' });
    const change = keys.change(1_700_000_000_000, 'a1b2c3d4e5f6', 7, { hash, version: 3 });
    expect(keys.parseChange(change)).toEqual({ timeMs: 1_700_000_000_000, replica: 'a1b2c3d4e5f6', of: { hash, version: 3 } });
    expect(change.slice(keys.changesPrefix.length)).toMatch(PREVIOUS_CHANGE_NAME);
    // A notice, and a change written before keys named versions, name nothing.
    expect(keys.parseChange(keys.change(1_700_000_000_000, 'a1b2c3d4e5f6', 8))).toEqual({ timeMs: 1_700_000_000_000, replica: 'a1b2c3d4e5f6', of: null });
    expect(keys.parseChange('shape/v1/changes/1700000000000-abcdef-00000001.json')).toEqual({ timeMs: 1_700_000_000_000, replica: 'abcdef', of: null });
    // In one millisecond a replica's changes and notices keep their order (a notice is read after the changes it removes).
    const ordered = [
      keys.change(5, 'a1b2c3d4e5f6', 1, { hash, version: 1 }),
      keys.change(5, 'a1b2c3d4e5f6', 2),
      keys.change(5, 'a1b2c3d4e5f6', 3, { hash: 'f'.repeat(64), version: 9_999_999_999 }),
      keys.change(5, 'a1b2c3d4e5f6', 4),
    ];
    expect([...ordered].sort()).toEqual(ordered);
    expect(keys.parseChange(ordered[2] as string)?.of).toEqual({ hash: 'f'.repeat(64), version: 9_999_999_999 });
  });

  it('a forget reads the change objects of the entry it forgets and the notices, not every entry’s', async () => {
    const keys = new ObjectKeys('forget-gets/');
    const store = await open('forget-gets/');
    await mapLimit([...Array(200).keys()], 16, (i) => store.append(makeEntry({ namespace: 'many', entity_path: 'bulk', key: `k${i}` }), 0));
    const earlier = makeEntry({ namespace: 'many', entity_path: 'earlier', key: 'gone' });
    await store.append(earlier, 0);
    await store.forget({ namespace: 'many', prefix: 'earlier' });
    const target = await write(store, { namespace: 'many', entity_path: 'people/alice', key: 'note' }, 3, (v) => `secret ${v}`);
    const before = await changeKeys(keys);
    expect(before).toHaveLength(200 + 3 + 1);

    const gets = await changeGets(keys, () => store.forget({ namespace: 'many', prefix: 'people/alice' }));
    const hash = addressHash(target);
    // Its three versions' changes, the earlier forget's notice and this forget's own.
    expect(named(keys, gets).sort()).toEqual([`${hash}@1`, `${hash}@2`, `${hash}@3`, 'unnamed', 'unnamed']);
    const after = await changeKeys(keys);
    expect(named(keys, after).filter((n) => n.startsWith(hash))).toEqual([]);
    expect(after).toHaveLength(200 + 2);
    expect(await store.head(addr(target))).toBeNull();
  });

  it('a forget repeated after one cut short deletes the change objects the first left', async () => {
    // The first forget takes the heads from the index, deletes the versions, then cannot read
    // the change log; the repeat finds no head to forget, and must still find the copies.
    const keys = new ObjectKeys('forget-repeat/');
    const store = await open('forget-repeat/');
    await mapLimit([...Array(20).keys()], 16, (i) => store.append(makeEntry({ namespace: 'r', entity_path: 'bulk', key: `k${i}` }), 0));
    const target = await write(store, { namespace: 'r', entity_path: 'people/bob', key: 'note' }, 2, (v) => `private ${v}`);
    bucket.proxy.failNext({ method: 'GET', pathIncludes: '/forget-repeat/v1/changes/' }, 1000);
    await expect(store.forget({ namespace: 'r', prefix: 'people/bob' })).rejects.toThrow();
    bucket.proxy.clearFaults();
    const hash = addressHash(target);
    expect(named(keys, await changeKeys(keys)).filter((n) => n.startsWith(hash))).toHaveLength(2);

    const gets = await changeGets(keys, () => store.forget({ namespace: 'r', prefix: 'people/bob' }));
    expect(named(keys, gets).sort()).toEqual([`${hash}@1`, `${hash}@2`, 'unnamed', 'unnamed']);
    expect(named(keys, await changeKeys(keys)).filter((n) => n.startsWith(hash))).toEqual([]);
    expect(await store.head(addr(target))).toBeNull();
  });

  it('a compaction deletes the change objects of superseded and dropped versions, judged by their keys: none is read', async () => {
    const keys = new ObjectKeys('compact-gets/');
    const store = await open('compact-gets/', 1);
    await mapLimit([...Array(100).keys()], 16, (i) => store.append(makeEntry({ namespace: 'c', entity_path: 'bulk', key: `k${i}` }), 0));
    const updated = await mapLimit([...Array(10).keys()], 16, (i) => write(store, { namespace: 'c', entity_path: 'updated', key: `u${i}` }, 2));
    const pruned = await write(store, { namespace: 'c', entity_path: 'pruned', key: 'p' }, 3);
    expect(await store.dropVersionsBefore(addr(pruned), 3)).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 20));

    const before = named(keys, await changeKeys(keys));
    const expected = [...updated.map((e) => `${addressHash(e)}@1`), `${addressHash(pruned)}@1`, `${addressHash(pruned)}@2`];
    expect(before.filter((n) => expected.includes(n)).sort()).toEqual(expected.sort());
    // A key names its version's entry and number: that is all a compaction judges by.
    expect(await changeGets(keys, () => store.compact())).toEqual([]);
    // One change object per entry is left, of its head.
    const left = named(keys, await changeKeys(keys));
    expect(left).toHaveLength(100 + 10 + 1);
    expect(left.filter((n) => expected.includes(n))).toEqual([]);
    // Nothing left to compact: nothing read.
    expect(await changeGets(keys, () => store.compact())).toEqual([]);
    expect((await store.list({ namespace: 'c', prefix: 'updated', limit: 20, now: Date.now() })).entries.map((e) => e.version)).toEqual(Array(10).fill(2));
  });

  it('a compaction deletes one at a time where the bucket fails DeleteObjects', async () => {
    const keys = new ObjectKeys('compact-no-batch/');
    const store = await open('compact-no-batch/', 1);
    const updated = await mapLimit([...Array(5).keys()], 16, (i) => write(store, { namespace: 'c', entity_path: 'updated', key: `u${i}` }, 3));
    await new Promise((resolve) => setTimeout(resolve, 20));
    // DeleteObjects is a POST to the bucket (`?delete`); nothing else the store sends is.
    const injected = bucket.proxy.injected;
    bucket.proxy.failNext({ method: 'POST', pathIncludes: '' }, 1000);
    try {
      await store.compact();
    } finally {
      bucket.proxy.clearFaults();
    }
    expect(bucket.proxy.injected).toBeGreaterThan(injected);
    expect(named(keys, await changeKeys(keys)).sort()).toEqual(updated.map((e) => `${addressHash(e)}@3`).sort());
  });

  it('follows, compacts and forgets change objects written before keys named their versions', async () => {
    const prefix = 'old-shape/';
    const keys = new ObjectKeys(prefix);
    const running = await open(prefix);
    // Written as the code before this naming did: the version object, then `<ms>-<replica>-<seq>.json`.
    const old = (ms: number, seq: number) => `${keys.changesPrefix}${String(ms).padStart(13, '0')}-abcdef-${String(seq).padStart(8, '0')}.json`;
    const kept = makeEntry({ namespace: 'old', entity_path: 'people', key: 'kept', value: 'kept v1' });
    const forgotten = makeEntry({ namespace: 'old', entity_path: 'people/carol', key: 'note', value: 'carol secret' });
    const now = Date.now();
    for (const [i, e] of [kept, forgotten].entries()) {
      await bucket.objects.put(keys.version(addressHash(e), 1), JSON.stringify(e));
      await bucket.objects.put(old(now - 3000 + i, i + 1), JSON.stringify(e));
    }
    // Followed by a running replica…
    expect((await running.list({ namespace: 'old', limit: 10, now: Date.now() })).entries).toEqual([kept, forgotten]);
    // …which writes on them (a named change now).
    const kept2 = makeEntry({ ...addr(kept), version: 2, value: 'kept v2', created_at: kept.created_at });
    await running.append(kept2, 1);
    // Followed by a replica starting from the change log, which compacts and forgets.
    const fresh = await open(prefix, 1);
    expect((await fresh.list({ namespace: 'old', limit: 10, now: Date.now() })).entries).toEqual([kept2, forgotten]);
    await fresh.compact();
    const afterCompaction = await changeKeys(keys);
    expect(afterCompaction).not.toContain(old(now - 3000, 1));
    expect(named(keys, afterCompaction).sort()).toEqual([`${addressHash(kept)}@2`, 'unnamed']);
    expect(afterCompaction).toContain(old(now - 2999, 2));
    await fresh.forget({ namespace: 'old', prefix: 'people/carol' });
    const left = await changeKeys(keys);
    expect(left).not.toContain(old(now - 2999, 2));
    // The forget's notice, named nothing.
    expect(named(keys, left).sort()).toEqual([`${addressHash(kept)}@2`, 'unnamed']);
    expect((await running.list({ namespace: 'old', limit: 10, now: Date.now() })).entries).toEqual([kept2]);
    expect((await fresh.history(addr(kept), { limit: 10 })).map((e) => e.version)).toEqual([2, 1]);
  });
});
