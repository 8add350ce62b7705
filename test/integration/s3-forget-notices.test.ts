import { describe, expect, it } from 'vitest';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import type { Store } from '../../packages/server/src/ports/store.ts';
import { ObjectKeys } from '../../packages/server/src/store/s3/object-keys.ts';
import { makeEntry } from '../contract/store-contract.ts';
import { useS3Bucket } from '../helpers/s3-bucket.ts';
import { keysGot } from '../helpers/s3-gets.ts';

/**
 * A forget's notices (the change-log objects that tell other replicas to drop its entries) are
 * deleted by a compaction once older than the notices' keep (noticeKeepMs, a day by default, a
 * few seconds here), so that forgets and compactions do not read every notice ever written. A
 * replica that has not read the change log for that long (its follow paused: these replicas poll
 * only when asked) checks its heads against the newest snapshot and the version objects instead
 * of trusting its follow, and does not serve what was forgotten while it was away. And a forget
 * GETs the newest snapshot once (it read it twice: once for the entries it copies, once to
 * rewrite it).
 */
const addr = (e: Entry) => ({ namespace: e.namespace, entity_path: e.entity_path, key: e.key });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const KEEP_MS = 2500;

describe('S3: forget notices are deleted after their keep', () => {
  const bucket = useS3Bucket();

  /** The change log's notices (keys naming no version: this suite writes no unnamed change). */
  const notices = async (keys: ObjectKeys): Promise<string[]> => {
    const all: string[] = [];
    for await (const page of bucket.objects.list(keys.changesPrefix)) all.push(...page.filter((k) => keys.parseChange(k)?.of === null));
    return all;
  };
  const listed = async (store: Store, namespace: string) => (await store.list({ namespace, limit: 100, now: Date.now() })).entries.map((e) => `${e.key}@${e.version}:${e.value}`);

  it('a compaction keeps a notice younger than the keep and deletes an older one', async () => {
    const keys = new ObjectKeys('notices-go/');
    const store = await bucket.open('notices-go/', { lookbackMs: 20, noticeKeepMs: KEEP_MS });
    const e = makeEntry({ namespace: 'n', entity_path: 'people/alice', key: 'note', value: 'secret' });
    await store.append(e, 0);
    await store.forget({ namespace: 'n', prefix: 'people/alice' });
    await store.compact();
    expect(await notices(keys)).toHaveLength(1);
    await sleep(KEEP_MS + 100);
    const later = makeEntry({ namespace: 'n', entity_path: 'people/bob', key: 'note' });
    await store.append(later, 0);
    await store.forget({ namespace: 'n', prefix: 'people/bob' });
    await store.compact();
    // The first forget's notice went; the second's, younger than the keep, stays.
    expect(await notices(keys)).toHaveLength(1);
    await sleep(KEEP_MS + 100);
    await store.compact();
    expect(await notices(keys)).toEqual([]);
  });

  it('a replica whose follow was paused across a forget and its notice deletion does not serve the forgotten entries', async () => {
    const prefix = 'notices-away/';
    const keys = new ObjectKeys(prefix);
    const options = { lookbackMs: 20, noticeKeepMs: KEEP_MS };
    const a = await bucket.open(prefix, options);
    const alice = makeEntry({ namespace: 'w', entity_path: 'people/alice', key: 'note', value: 'quokkaalpha' });
    const carol = makeEntry({ namespace: 'w', entity_path: 'people/carol', key: 'note', value: 'quokkacharlie' });
    const kept = makeEntry({ namespace: 'w', entity_path: 'people/dave', key: 'note', value: 'kept' });
    await a.append(alice, 0);
    const alice2 = makeEntry({ ...addr(alice), version: 2, value: 'quokkaalpha2', created_at: alice.created_at });
    await a.append(alice2, 1);
    await a.append(carol, 0);
    await a.append(kept, 0);
    // A snapshot holding all three (written at close by a replica that read them): B's check
    // after being away reads it, and the forgets rewrite it without what they forget.
    const snapshotter = await bucket.open(prefix, { ...options, snapshotEveryChanges: 1 });
    await snapshotter.close();
    const snapshots: string[] = [];
    for await (const page of bucket.objects.list(keys.snapshotsPrefix)) snapshots.push(...page);
    expect(snapshots).toHaveLength(1);
    // B follows (it polls only when asked: a list), then is left alone; C is closed.
    const b = await bucket.open(prefix, options);
    const c = await bucket.open(prefix, options);
    expect(await listed(b, 'w')).toEqual(['note@2:quokkaalpha2', 'note@1:quokkacharlie', 'note@1:kept']);
    await c.close();

    await a.forget({ namespace: 'w', prefix: 'people/alice' });
    await a.forget({ namespace: 'w', prefix: 'people/carol' });
    // Alice written afresh after her forget (version 1 again): B must come to show that one.
    const fresh = makeEntry({ ...addr(alice), value: 'fresh' });
    await a.append(fresh, 0);
    await sleep(KEEP_MS + 100);
    await a.compact();
    expect(await notices(keys)).toEqual([]);

    // B's follow resumes: the notices are gone, and it still drops what they named.
    expect(await listed(b, 'w')).toEqual(['note@1:fresh', 'note@1:kept']);
    expect(await b.head(addr(carol))).toBeNull();
    expect((await b.head(addr(alice)))?.value).toBe('fresh');
    // C restarts: from the newest snapshot (if any) and the change log, which hold neither.
    const c2 = await bucket.open(prefix, options);
    expect(await listed(c2, 'w')).toEqual(['note@1:fresh', 'note@1:kept']);
  });

  it('a forget GETs the newest snapshot once', async () => {
    const prefix = 'notices-snapshot/';
    const keys = new ObjectKeys(prefix);
    // Closed after a change, this replica writes a snapshot (Snapshots.writeAtClose).
    const writer = await bucket.open(prefix, { snapshotEveryChanges: 1 });
    const entries = Array.from({ length: 5 }, (_, i) => makeEntry({ namespace: 's', entity_path: `people/p${i}`, key: 'note', value: `quokka${i}` }));
    for (const e of entries) await writer.append(e, 0);
    await writer.close();
    const snapshots: string[] = [];
    for await (const page of bucket.objects.list(keys.snapshotsPrefix)) snapshots.push(...page);
    expect(snapshots).toHaveLength(1);

    const store = await bucket.open(prefix);
    const got = await keysGot((key) => key.startsWith(keys.snapshotsPrefix), () => store.forget({ namespace: 's', prefix: 'people/p0' }));
    expect(got).toEqual(snapshots);
    const text = (await bucket.objects.getText(snapshots[0] as string)) ?? '';
    expect(text).not.toContain('quokka0');
    expect(text).toContain('quokka1');
  });
});
