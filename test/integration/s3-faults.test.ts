import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import { ObjectKeys, addressHash } from '../../packages/server/src/store/s3/object-keys.ts';
import { makeEntry } from '../contract/store-contract.ts';
import { useS3ReplicaPair } from '../helpers/s3-replica-pair.ts';

const addr = (e: Entry) => ({ namespace: e.namespace, entity_path: e.entity_path, key: e.key });

describe('S3 store: lost replies, failed change-log writes, late change objects', () => {
  const pair = useS3ReplicaPair('faults/');

  it('retries a change-log object that could not be written, and announces it once', async () => {
    const seen: Entry[] = [];
    const stop = pair.b.changes.subscribe((e) => {
      if (e.namespace === 'retry') seen.push(e);
    });
    pair.proxy.failNext({ method: 'PUT', pathIncludes: '/v1/changes/' }, 1000);
    const e = makeEntry({ namespace: 'retry', key: 'late' });
    await pair.a.append(e, 0); // durable: the version object was written
    expect(await pair.a.head(addr(e))).toEqual(e);
    expect(await pair.b.head(addr(e))).toEqual(e);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(seen).toEqual([]);
    pair.proxy.clearFaults();
    await expect.poll(() => seen.length, { timeout: 5000 }).toBe(1);
    expect(seen[0]).toEqual(e);
    expect((await pair.b.list({ namespace: 'retry', limit: 10, now: Date.now() })).entries).toEqual([e]);
    await new Promise((resolve) => setTimeout(resolve, 500));
    stop();
    expect(seen).toHaveLength(1);
  });

  it('recognises its own version object when the reply to the put was lost', async () => {
    // The SDK retries the put; the retry meets 412, and the write id shows the object is ours.
    const [injected, refused] = [pair.proxy.injected, pair.proxy.refused];
    pair.proxy.failNext({ method: 'PUT', pathIncludes: '/v1/entries/' }, 1, 'lost-reply');
    const e = makeEntry({ namespace: 'lost-reply', key: 'k' });
    await pair.a.append(e, 0);
    expect([pair.proxy.injected - injected, pair.proxy.refused - refused]).toEqual([1, 1]);
    expect(await pair.b.head(addr(e))).toEqual(e);
    expect(await pair.b.history(addr(e), { limit: 10 })).toEqual([e]);
  });

  it('recognises its own record when the reply to its create was lost', async () => {
    // As for a version object: the retried create meets 412, and the write id shows the record is this call's.
    const [injected, refused] = [pair.proxy.injected, pair.proxy.refused];
    pair.proxy.failNext({ method: 'PUT', pathIncludes: '/v1/records/' }, 1, 'lost-reply');
    expect(await pair.a.createRecord('deliveries-seen', 'lost-reply-1', { at: 1 })).toBe(true);
    expect([pair.proxy.injected - injected, pair.proxy.refused - refused]).toEqual([1, 1]);
    expect((await pair.b.getRecord('deliveries-seen', 'lost-reply-1'))?.data).toEqual({ at: 1 });
    // Anyone's later create of it, this replica's too, finds it there.
    expect(await pair.a.createRecord('deliveries-seen', 'lost-reply-1', { at: 2 })).toBe(false);
    expect(await pair.b.createRecord('deliveries-seen', 'lost-reply-1', { at: 3 })).toBe(false);
  });

  it('picks up a change object that lands after later-stamped ones were listed', async () => {
    const seen: Entry[] = [];
    const stop = pair.b.changes.subscribe((e) => {
      if (e.namespace === 'late') seen.push(e);
    });
    const first = makeEntry({ namespace: 'late', key: 'on-time' });
    await pair.a.append(first, 0);
    await expect.poll(() => seen.length, { timeout: 2000 }).toBe(1);
    // Another replica (slow clock, slow put) writes a change stamped 3 s ago, which sorts
    // before the change B has already listed.
    const late = makeEntry({ namespace: 'late', key: 'straggler' });
    const keys = new ObjectKeys('faults/');
    const raw = new S3Client({
      region: 'us-east-1',
      endpoint: pair.s3.endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: pair.s3.accessKeyId, secretAccessKey: pair.s3.secretAccessKey },
    });
    const put = (Key: string) => raw.send(new PutObjectCommand({ Bucket: pair.s3.bucket, Key, Body: JSON.stringify(late) }));
    await put(keys.version(addressHash(late), 1));
    await put(keys.change(Date.now() - 3000, 'abcdef', 1));
    raw.destroy();
    await expect.poll(() => seen.map((e) => e.key), { timeout: 2000 }).toEqual(['on-time', 'straggler']);
    stop();
    expect((await pair.b.list({ namespace: 'late', limit: 10, now: Date.now() })).entries).toEqual([first, late]);
  });
});
