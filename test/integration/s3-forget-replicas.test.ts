import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import { VersionConflict } from '../../packages/server/src/domain/errors.ts';
import { openS3Store } from '../../packages/server/src/store/s3/index.ts';
import { makeEntry } from '../contract/store-contract.ts';
import { useS3ReplicaPair } from '../helpers/s3-replica-pair.ts';

/**
 * A forget on one S3 replica while another still holds the entry's head. Replica a polls the
 * change log only hourly here, so it learns of b's forget from the bucket alone: the version
 * its append built on is gone. Nothing may stand on a deleted history: a version there would
 * be served by the replica that wrote it, listed by replicas that read its change object, and
 * found by no one reading the bucket from version 1.
 */
const PREFIX = 'forget-replicas/';
const addr = (e: Entry) => ({ namespace: e.namespace, entity_path: e.entity_path, key: e.key });
const target = (e: Entry) => ({ namespace: e.namespace, prefix: e.entity_path, key: e.key });

describe('S3: a forget on one replica, appends on another that has not heard of it', () => {
  const pair = useS3ReplicaPair(PREFIX, { aPollIntervalMs: 3_600_000 });

  /** Versions 1 and 2 written on a, known to b. */
  const twoVersions = async (key: string): Promise<Entry> => {
    const first = makeEntry({ namespace: 'gone', key });
    await pair.a.append(first, 0);
    const second = makeEntry({ namespace: 'gone', key, version: 2, created_at: first.created_at });
    await pair.a.append(second, 1);
    expect((await pair.b.head(addr(second)))?.version).toBe(2);
    return second;
  };

  /** What a replica opened now, from the bucket alone, holds of the entry. */
  const fromBucket = async (e: Entry) => {
    const c = await openS3Store({ bucket: pair.s3.bucket, endpoint: pair.proxy.endpoint, prefix: PREFIX, logger: pino({ level: 'silent' }) });
    try {
      const listed = (await c.list({ namespace: e.namespace, limit: 100, now: Date.now() })).entries.filter((l) => l.key === e.key);
      return { head: await c.head(addr(e)), history: await c.history(addr(e), { limit: 10 }), listed };
    } finally {
      await c.close();
    }
  };

  it('refuses an append on the forgotten head, and the retry writes the entry afresh', async () => {
    const held = await twoVersions('single');
    await pair.b.forget(target(held));
    const onForgotten = makeEntry({ namespace: 'gone', key: 'single', version: 3, created_at: held.created_at });
    await expect(pair.a.append(onForgotten, 2)).rejects.toBeInstanceOf(VersionConflict);
    // a has heard of the forget now: the entry is gone, and a new version 1 is taken.
    expect(await pair.a.head(addr(held))).toBeNull();
    const afresh = makeEntry({ namespace: 'gone', key: 'single', value: 'afresh' });
    await pair.a.append(afresh, 0);
    expect(await pair.b.head(addr(held))).toEqual(afresh);
    expect(await fromBucket(held)).toEqual({ head: afresh, history: [afresh], listed: [afresh] });
  });

  it('refuses a batch whose item builds on the forgotten head, writing none of it', async () => {
    const held = await twoVersions('in-batch');
    await pair.b.forget(target(held));
    const other = makeEntry({ namespace: 'gone', key: 'batch-neighbour' });
    const onForgotten = makeEntry({ namespace: 'gone', key: 'in-batch', version: 3, created_at: held.created_at });
    const refused = await pair.a.appendBatch([{ entry: other, expectedHead: 0 }, { entry: onForgotten, expectedHead: 2 }]).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(VersionConflict);
    expect((refused as VersionConflict).item).toBe(1);
    expect(await pair.a.head(addr(held))).toBeNull();
    expect(await pair.b.head(addr(other))).toBeNull();
    expect(await fromBucket(held)).toEqual({ head: null, history: [], listed: [] });
  });

  it('refuses an append on the forgotten head once the entry is written afresh at that version', async () => {
    const first = makeEntry({ namespace: 'gone', key: 'afresh-at-1' });
    await pair.a.append(first, 0);
    expect(await pair.b.head(addr(first))).toEqual(first);
    await pair.b.forget(target(first));
    const fresh = makeEntry({ namespace: 'gone', key: 'afresh-at-1', value: 'fresh' });
    await pair.b.append(fresh, 0);
    // a still holds the forgotten version 1: a version 2 built on it must not land on the fresh one.
    const onForgotten = makeEntry({ namespace: 'gone', key: 'afresh-at-1', version: 2, created_at: first.created_at });
    await expect(pair.a.append(onForgotten, 1)).rejects.toBeInstanceOf(VersionConflict);
    expect(await pair.a.head(addr(first))).toEqual(fresh);
    expect(await fromBucket(first)).toEqual({ head: fresh, history: [fresh], listed: [fresh] });
  });

  it('aborts a batch still undecided when the forget reaches it, or names what it committed', async () => {
    const held = await twoVersions('batch-mid-forget');
    // a's batch creates its version 3 and checks version 2, then waits on its commit marker;
    // the forget meets the undecided version 3 while it deletes.
    const release = pair.proxy.hold({ method: 'PUT', pathIncludes: '/batches/' });
    const onHeld = makeEntry({ namespace: 'gone', key: 'batch-mid-forget', version: 3, created_at: held.created_at });
    const batch = pair.a.appendBatch([{ entry: onHeld, expectedHead: 2 }]).then(
      () => 'committed',
      (e: unknown) => e,
    );
    await expect.poll(() => pair.proxy.held, { timeout: 5000 }).toBe(1);
    const forgetting = pair.b.forget(target(held));
    await expect.poll(() => pair.proxy.held, { timeout: 5000 }).toBe(2);
    release();
    await forgetting;
    // Whichever marker won, nothing of the entry is left anywhere.
    const outcome = await batch;
    expect(outcome === 'committed' || outcome instanceof Error).toBe(true);
    expect(await pair.b.head(addr(held))).toBeNull();
    expect(await fromBucket(held)).toEqual({ head: null, history: [], listed: [] });
    await pair.a.list({ namespace: 'gone', limit: 1, now: Date.now() });
    await expect.poll(() => pair.a.head(addr(held)), { timeout: 2000 }).toBeNull();
  });

  it('deletes a version appended while the forget was deleting, and every replica drops it', async () => {
    const held = await twoVersions('mid-forget');
    // The forget lists the entry's objects, then waits on its deletes: the append lands now,
    // on a version 2 that still stands, and succeeds.
    const release = pair.proxy.hold({ method: 'DELETE', pathIncludes: '/entries/' });
    const forgetting = pair.b.forget(target(held));
    await expect.poll(() => pair.proxy.held, { timeout: 5000 }).toBeGreaterThan(0);
    const raced = makeEntry({ namespace: 'gone', key: 'mid-forget', version: 3, created_at: held.created_at });
    await pair.a.append(raced, 2);
    expect(await pair.a.head(addr(held))).toEqual(raced);
    release();
    await forgetting;
    expect(await pair.b.head(addr(held))).toBeNull();
    expect(await fromBucket(held)).toEqual({ head: null, history: [], listed: [] });
    // a hears of the forget and of the version it withdrew once it reads the change log.
    await pair.a.list({ namespace: 'gone', limit: 1, now: Date.now() });
    await expect.poll(() => pair.a.head(addr(held)), { timeout: 2000 }).toBeNull();
  });
});
