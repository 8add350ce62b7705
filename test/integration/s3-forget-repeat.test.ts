import { describe, expect, it, vi } from 'vitest';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import type { Store } from '../../packages/server/src/ports/store.ts';
import { BucketObjects } from '../../packages/server/src/store/s3/bucket-objects.ts';
import { ObjectKeys, addressHash } from '../../packages/server/src/store/s3/object-keys.ts';
import { makeEntry } from '../contract/store-contract.ts';
import { useS3Bucket } from '../helpers/s3-bucket.ts';

/**
 * A forget cut short by an outage while it deletes version objects answers UNAVAILABLE, and
 * repeating it finishes it: the repeat finds no head of the entries in the index (the first
 * took them out), and must still delete the versions the first left, found through the
 * copies that tell of them (change objects, the snapshot), before it deletes those copies.
 * The outage is real: once the forget's first version delete has been answered, the proxy
 * answers 500 to every further one.
 */
const WORD = 'zanzibarquux';
const addr = (e: Entry) => ({ namespace: e.namespace, entity_path: e.entity_path, key: e.key });

describe('S3: a forget cut short while it deletes versions, repeated', () => {
  const bucket = useS3Bucket();
  const open = bucket.open;

  const keysUnder = async (prefix: string): Promise<string[]> => {
    const all: string[] = [];
    for await (const page of bucket.objects.list(prefix)) all.push(...page);
    return all;
  };

  /** Every object under `prefix` whose body holds `word`. */
  const holding = async (prefix: string, word: string): Promise<string[]> => {
    const found: string[] = [];
    for (const key of await keysUnder(prefix)) if ((await bucket.objects.getText(key))?.includes(word)) found.push(key);
    return found;
  };

  /** Versions 1..`count` of the entry, each value holding WORD; answers them. */
  const write = async (store: Store, address: ReturnType<typeof addr>, count: number): Promise<Entry[]> => {
    const written: Entry[] = [];
    for (let v = 1; v <= count; v++) {
      const entry = makeEntry({ ...address, version: v, value: `${WORD} ${address.key} ${v}`, created_at: written[0]?.created_at });
      await store.append(entry, v - 1);
      written.push(entry);
    }
    return written;
  };

  /**
   * Run `forget` with the bucket failing every version delete after the first (answered) one:
   * a pass-through wrapper holds back the others until the first is answered, then the proxy
   * fails them on the wire. The faults stay until every delete the forget started is over
   * (the client retries a 500 after the forget has already failed).
   */
  const cutShort = async (keys: ObjectKeys, forget: () => Promise<unknown>): Promise<unknown> => {
    const original = BucketObjects.prototype.delete;
    let first: Promise<void> | undefined;
    let failing = false;
    const started: Promise<void>[] = [];
    const spy = vi.spyOn(BucketObjects.prototype, 'delete').mockImplementation(function (this: BucketObjects, key) {
      if (!key.startsWith(keys.entriesPrefix)) return original.call(this, key);
      const done = (async () => {
        if (!first) {
          first = original.call(this, key);
          return first;
        }
        await first.catch(() => {});
        if (!failing) {
          failing = true;
          bucket.proxy.failNext({ method: 'DELETE', pathIncludes: keys.entriesPrefix }, 100_000);
        }
        return original.call(this, key);
      })();
      started.push(done);
      return done;
    });
    try {
      return await forget().then(
        () => 'finished',
        (error: unknown) => error,
      );
    } finally {
      spy.mockRestore();
      await Promise.allSettled(started);
      bucket.proxy.clearFaults();
    }
  };

  it('the repeat deletes the versions the first left, and every copy of their content', async () => {
    const prefix = 'forget-repeat-versions/';
    const keys = new ObjectKeys(prefix);
    const store = await open(prefix);
    const kept = makeEntry({ namespace: 'f', entity_path: 'people/erin', key: 'note', value: 'kept' });
    await store.append(kept, 0);
    const x = await write(store, { namespace: 'f', entity_path: 'people/dave', key: 'x' }, 3);
    const y = await write(store, { namespace: 'f', entity_path: 'people/dave/work', key: 'y' }, 2);
    // A snapshot holding their heads, written by another replica.
    const snapshotter = await open(prefix, { pollIntervalMs: 20, snapshotEveryChanges: 1, snapshotMinIntervalMs: 0 });
    await expect.poll(async () => (await holding(keys.snapshotsPrefix, WORD)).length, { timeout: 5000 }).toBeGreaterThan(0);
    await snapshotter.close();

    const hashes = [addressHash(addr(x[0] as Entry)), addressHash(addr(y[0] as Entry))];
    const versionKeys = async () => (await Promise.all(hashes.map((h) => keysUnder(`${keys.entriesPrefix}${h}/`)))).flat();
    expect(await versionKeys()).toHaveLength(5);

    const outcome = await cutShort(keys, () => store.forget({ namespace: 'f', prefix: 'people/dave' }));
    expect(outcome).toBeInstanceOf(Error);
    // Cut short for real: one version went, the rest are still in the bucket.
    const left = await versionKeys();
    expect(left).toHaveLength(4);
    expect(await holding(prefix, WORD)).not.toEqual([]);

    await store.forget({ namespace: 'f', prefix: 'people/dave' });
    expect(await versionKeys()).toEqual([]);
    expect(await holding(prefix, WORD)).toEqual([]);
    // The rest of the bucket is untouched, and a replica starting from it knows nothing of them.
    expect(await store.head(addr(kept))).toEqual(kept);
    const fresh = await open(prefix);
    expect(await fresh.head(addr(x[2] as Entry))).toBeNull();
    expect(await fresh.head(addr(y[1] as Entry))).toBeNull();
    expect((await fresh.list({ namespace: 'f', limit: 10, now: Date.now() })).entries).toEqual([kept]);
  });

  it('a repeat cut short again leaves what the next one needs to finish', async () => {
    const prefix = 'forget-repeat-twice/';
    const keys = new ObjectKeys(prefix);
    const store = await open(prefix);
    const x = await write(store, { namespace: 't', entity_path: 'people/frank', key: 'x' }, 3);
    const y = await write(store, { namespace: 't', entity_path: 'people/frank', key: 'y' }, 3);
    const hashes = [addressHash(addr(x[0] as Entry)), addressHash(addr(y[0] as Entry))];
    const versionKeys = async () => (await Promise.all(hashes.map((h) => keysUnder(`${keys.entriesPrefix}${h}/`)))).flat();

    expect(await cutShort(keys, () => store.forget({ namespace: 't', prefix: 'people/frank' }))).toBeInstanceOf(Error);
    expect(await versionKeys()).toHaveLength(5);
    // The repeat is cut short too, after one more version went.
    expect(await cutShort(keys, () => store.forget({ namespace: 't', prefix: 'people/frank' }))).toBeInstanceOf(Error);
    expect(await versionKeys()).toHaveLength(4);

    await store.forget({ namespace: 't', prefix: 'people/frank' });
    expect(await versionKeys()).toEqual([]);
    expect(await holding(prefix, WORD)).toEqual([]);
  });
});
