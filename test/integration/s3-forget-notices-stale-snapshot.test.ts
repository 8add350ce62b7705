import { describe, expect, it } from 'vitest';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import type { Store } from '../../packages/server/src/ports/store.ts';
import { ObjectKeys } from '../../packages/server/src/store/s3/object-keys.ts';
import { Snapshots } from '../../packages/server/src/store/s3/snapshots.ts';
import { makeEntry } from '../contract/store-contract.ts';
import { useS3Bucket } from '../helpers/s3-bucket.ts';

/**
 * A snapshot whose heads were taken before its replica heard of a forget, and whose PUT was
 * slow, lands after the forget rewrote the snapshots there were: it holds the forgotten entry.
 * While the forget's notice stays, a replica starting from it replays the notice; a compaction
 * that deletes the notice (its keep over) must first rewrite such a snapshot without the
 * forgotten heads (S3Store.clearSnapshotsForNotices), or a fresh replica, and one away longer
 * than the keep (which trusts the heads the newest snapshot holds), serve the entry again. An
 * entry written afresh after its forget stays in the snapshot.
 */
const addr = (e: Entry) => ({ namespace: e.namespace, entity_path: e.entity_path, key: e.key });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const KEEP_MS = 2500;

describe('S3: a snapshot that raced a forget does not outlive its notice with the forgotten entry', () => {
  const bucket = useS3Bucket();
  const listed = async (store: Store) => (await store.list({ namespace: 'w', limit: 100, now: Date.now() })).entries.map((e) => `${e.entity_path}:${e.value}`).sort();
  const list = async (prefix: string): Promise<string[]> => {
    const all: string[] = [];
    for await (const page of bucket.objects.list(prefix)) all.push(...page);
    return all;
  };

  /**
   * Alice, bob (forgotten, then written afresh) and dave; B reads them and goes quiet; W's
   * snapshot, its heads taken before alice's forget, lands after the forget (its PUT held).
   */
  const raceSnapshot = async (prefix: string) => {
    const keys = new ObjectKeys(prefix);
    const options = { lookbackMs: 20, noticeKeepMs: KEEP_MS };
    const a = await bucket.open(prefix, options);
    const alice = makeEntry({ namespace: 'w', entity_path: 'people/alice', key: 'note', value: 'quokka-secret' });
    const bob = makeEntry({ namespace: 'w', entity_path: 'people/bob', key: 'note', value: 'bob-old' });
    const dave = makeEntry({ namespace: 'w', entity_path: 'people/dave', key: 'note', value: 'kept' });
    for (const e of [alice, bob, dave]) await a.append(e, 0);
    // B reads them all, then goes quiet (it polls only when asked) for longer than the keep.
    const b = await bucket.open(prefix, options);
    expect(await listed(b)).toEqual(['people/alice:quokka-secret', 'people/bob:bob-old', 'people/dave:kept']);
    // Bob forgotten, then written afresh (version 1 again): a head the snapshot must keep.
    await a.forget({ namespace: 'w', prefix: 'people/bob' });
    await a.append(makeEntry({ ...addr(bob), value: 'bob-fresh' }), 0);

    // W takes its heads (alice among them) at close; its snapshot PUT is held (a slow PUT)
    // while A forgets alice, which finds no snapshot to rewrite; then it lands.
    const w = await bucket.open(prefix, { ...options, snapshotEveryChanges: 1 });
    const release = bucket.proxy.hold({ method: 'PUT', pathIncludes: `/${keys.snapshotsPrefix}` });
    const closing = w.close();
    while (bucket.proxy.held === 0) await sleep(10);
    await a.forget({ namespace: 'w', prefix: 'people/alice' });
    release();
    await closing;
    let snapshots: string[] = [];
    for (let i = 0; i < 200 && snapshots.length === 0; i++) {
      snapshots = await list(keys.snapshotsPrefix);
      if (snapshots.length === 0) await sleep(25);
    }
    expect(snapshots).toHaveLength(1);
    const snapshot = snapshots[0] as string;
    expect(await bucket.objects.getText(snapshot)).toContain('quokka-secret');
    return { keys, options, a, b, alice, snapshot };
  };

  it('a compaction clears the late snapshot before it deletes the notices; fresh and away replicas do not serve the entry', async () => {
    const prefix = 'stale-snap/';
    const { keys, options, a, b, alice, snapshot } = await raceSnapshot(prefix);
    // Within the keep, a replica starting from it replays the notice.
    expect(await listed(await bucket.open(prefix, options))).toEqual(['people/bob:bob-fresh', 'people/dave:kept']);

    await sleep(KEEP_MS + 200);
    await a.compact();
    expect((await list(keys.changesPrefix)).filter((k) => keys.parseChange(k)?.of === null)).toEqual([]);
    const text = (await bucket.objects.getText(snapshot)) ?? '';
    expect(text).not.toContain('quokka-secret');
    expect(text).toContain('bob-fresh');
    expect(text).toContain('kept');

    // A replica starting now, and B back after longer than the keep, serve no alice.
    const c = await bucket.open(prefix, options);
    expect(await listed(c)).toEqual(['people/bob:bob-fresh', 'people/dave:kept']);
    expect(await c.head(addr(alice))).toBeNull();
    expect(await listed(b)).toEqual(['people/bob:bob-fresh', 'people/dave:kept']);
    expect(await b.head(addr(alice))).toBeNull();
  });

  it('a replica that loaded the late snapshot just before the compaction cleared it and deleted the notice does not serve the entry', async () => {
    const prefix = 'stale-snap-start/';
    const { keys, options, a, alice } = await raceSnapshot(prefix);
    await sleep(KEEP_MS + 200);
    // C loads the snapshot (alice in it), then the compaction runs before C's first read of the
    // change log: C's heads are as of the snapshot's watermark, older than the keep.
    const load = Snapshots.prototype.loadLatest;
    let loaded!: () => void;
    const isLoaded = new Promise<void>((resolve) => (loaded = resolve));
    let go!: () => void;
    const proceed = new Promise<void>((resolve) => (go = resolve));
    Snapshots.prototype.loadLatest = async function (this: Snapshots) {
      Snapshots.prototype.loadLatest = load;
      const got = await load.call(this);
      loaded();
      await proceed;
      return got;
    };
    try {
      const opening = bucket.open(prefix, options);
      await isLoaded;
      await a.compact();
      expect((await list(keys.changesPrefix)).filter((k) => keys.parseChange(k)?.of === null)).toEqual([]);
      go();
      const c = await opening;
      expect(await listed(c)).toEqual(['people/bob:bob-fresh', 'people/dave:kept']);
      expect(await c.head(addr(alice))).toBeNull();
    } finally {
      Snapshots.prototype.loadLatest = load;
      go();
    }
  });
});
