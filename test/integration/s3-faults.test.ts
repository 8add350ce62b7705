import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Entry } from '../../src/domain/entry.ts';
import type { Store } from '../../src/ports/store.ts';
import { openS3Store } from '../../src/store/s3/index.ts';
import { ObjectKeys, addressHash } from '../../src/store/s3/object-keys.ts';
import { makeEntry } from '../contract/store-contract.ts';
import { type ConditionalProxy, startConditionalProxy } from '../helpers/s3-conditional-proxy.ts';
import { type TestS3, startS3 } from '../helpers/s3.ts';

const silent = pino({ level: 'silent' });
const addr = (e: Entry) => ({ namespace: e.namespace, entity_path: e.entity_path, key: e.key });

describe('S3 store: lost replies, failed change-log writes, late change objects', () => {
  let s3: TestS3;
  let proxy: ConditionalProxy;
  let a: Store;
  let b: Store;
  const open = () =>
    openS3Store({ bucket: s3.bucket, endpoint: proxy.endpoint, prefix: 'faults/', logger: silent, pollIntervalMs: 200 });

  beforeAll(async () => {
    s3 = await startS3();
    proxy = await startConditionalProxy(s3.endpoint);
    process.env.AWS_ACCESS_KEY_ID = s3.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = s3.secretAccessKey;
    [a, b] = await Promise.all([open(), open()]);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await proxy?.close();
    await s3?.stop();
  });

  it('retries a change-log object that could not be written, and announces it once', async () => {
    const seen: Entry[] = [];
    const stop = b.changes.subscribe((e) => {
      if (e.namespace === 'retry') seen.push(e);
    });
    proxy.failNext({ method: 'PUT', pathIncludes: '/v1/changes/' }, 1000);
    const e = makeEntry({ namespace: 'retry', key: 'late' });
    await a.append(e, 0); // durable: the version object was written
    expect(await a.head(addr(e))).toEqual(e);
    expect(await b.head(addr(e))).toEqual(e);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(seen).toEqual([]);
    proxy.clearFaults();
    await expect.poll(() => seen.length, { timeout: 5000 }).toBe(1);
    expect(seen[0]).toEqual(e);
    expect((await b.list({ namespace: 'retry', limit: 10, now: Date.now() })).entries).toEqual([e]);
    await new Promise((resolve) => setTimeout(resolve, 500));
    stop();
    expect(seen).toHaveLength(1);
  });

  it('recognises its own version object when the reply to the put was lost', async () => {
    // The SDK retries the put; the retry meets 412, and the write id shows the object is ours.
    const [injected, refused] = [proxy.injected, proxy.refused];
    proxy.failNext({ method: 'PUT', pathIncludes: '/v1/entries/' }, 1, 'lost-reply');
    const e = makeEntry({ namespace: 'lost-reply', key: 'k' });
    await a.append(e, 0);
    expect([proxy.injected - injected, proxy.refused - refused]).toEqual([1, 1]);
    expect(await b.head(addr(e))).toEqual(e);
    expect(await b.history(addr(e), { limit: 10 })).toEqual([e]);
  });

  it('picks up a change object that lands after later-stamped ones were listed', async () => {
    const seen: Entry[] = [];
    const stop = b.changes.subscribe((e) => {
      if (e.namespace === 'late') seen.push(e);
    });
    const first = makeEntry({ namespace: 'late', key: 'on-time' });
    await a.append(first, 0);
    await expect.poll(() => seen.length, { timeout: 2000 }).toBe(1);
    // Another replica (slow clock, slow put) writes a change stamped 3 s ago, which sorts
    // before the change B has already listed.
    const late = makeEntry({ namespace: 'late', key: 'straggler' });
    const keys = new ObjectKeys('faults/');
    const raw = new S3Client({
      region: 'us-east-1',
      endpoint: s3.endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    });
    const put = (Key: string) => raw.send(new PutObjectCommand({ Bucket: s3.bucket, Key, Body: JSON.stringify(late) }));
    await put(keys.version(addressHash(late), 1));
    await put(keys.change(Date.now() - 3000, 'abcdef', 1));
    raw.destroy();
    await expect.poll(() => seen.map((e) => e.key), { timeout: 2000 }).toEqual(['on-time', 'straggler']);
    stop();
    expect((await b.list({ namespace: 'late', limit: 10, now: Date.now() })).entries).toEqual([first, late]);
  });
});
