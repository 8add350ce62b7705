import { DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Entry } from '../../packages/server/src/domain/entry.ts';
import type { Store } from '../../packages/server/src/ports/store.ts';
import { BATCH_DEADLINE, BATCH_ID, BatchMarkers, WRITTEN_AT } from '../../packages/server/src/store/s3/batch-markers.ts';
import { BucketObjects } from '../../packages/server/src/store/s3/bucket-objects.ts';
import { openS3Store } from '../../packages/server/src/store/s3/index.ts';
import { ObjectKeys, addressHash } from '../../packages/server/src/store/s3/object-keys.ts';
import { createS3Client } from '../../packages/server/src/store/s3/s3-client.ts';
import { makeEntry } from '../contract/store-contract.ts';
import { rawClient, startS3Behind, type TestS3Behind } from '../helpers/s3.ts';

/**
 * A killed batch writer leaves up to 16 versions of one batch undecided; past the deadline,
 * every reader of them (a search, a list page: one per entry, at once) must settle the batch.
 * They share the marker write: one conditional PUT of batches/<id>.json from the process, not
 * one each that all but one lose and then poll for (on a starved store the last of those timed
 * out). Every reader answers the same fate.
 */
const READERS = 16;
const DEADLINE_MS = 1_500;
let s3: TestS3Behind;
const PREFIX = 'herd/';
const keys = new ObjectKeys(PREFIX);
const silent = pino({ level: 'silent' });
const open = () => openS3Store({ bucket: s3.bucket, endpoint: s3.proxy.endpoint, prefix: PREFIX, logger: silent });
const stores: Store[] = [];

beforeAll(async () => {
  process.env.CAIRN_TEST_BATCH_DEADLINE_MS = String(DEADLINE_MS);
  s3 = await startS3Behind();
});
afterAll(async () => {
  for (const store of stores) await store.close();
  await s3?.stop();
  delete process.env.CAIRN_TEST_BATCH_DEADLINE_MS;
});

/** Counts the PUTs of `id`'s marker that reach the proxy from now on. */
const countMarkerPuts = (id: string): { readonly puts: number } => {
  const counter = { puts: 0 };
  const path = `/${s3.bucket}/${keys.batch(id)}`;
  s3.proxy.onRequest = (method, url) => {
    if (method === 'PUT' && url.split('?')[0] === path) counter.puts += 1;
  };
  return counter;
};

/** A fresh reader's markers (nothing cached), talking to the bucket through the proxy. */
const freshMarkers = () => {
  const objects = new BucketObjects(createS3Client({ region: 'us-east-1', endpoint: s3.proxy.endpoint }), s3.bucket);
  return new BatchMarkers(objects, keys, silent);
};
const rawObjects = () => new BucketObjects(createS3Client({ region: 'us-east-1', endpoint: s3.endpoint }), s3.bucket);

/** Plants READERS versions of one batch, as a writer killed before its marker leaves them, overdue. */
const plantKilledBatch = async (name: string): Promise<{ id: string; entries: Entry[] }> => {
  const id = `killed-${name}`;
  const deadline = Date.now() - 1;
  const client = rawClient(s3);
  const entries = Array.from({ length: READERS }, (_, i) => makeEntry({ entity_path: `herd/${name}`, key: `k${i}`, version: 1 }));
  await Promise.all(
    entries.map((entry) =>
      client.send(
        new PutObjectCommand({
          Bucket: s3.bucket,
          Key: keys.version(addressHash(entry), 1),
          Body: JSON.stringify(entry),
          Metadata: { [BATCH_ID]: id, [BATCH_DEADLINE]: String(deadline), [WRITTEN_AT]: entry.written_at },
        }),
      ),
    ),
  );
  client.destroy();
  return { id, entries };
};

const markerOf = async (id: string): Promise<unknown> => {
  const text = await rawObjects().getText(keys.batch(id));
  return text === null ? null : JSON.parse(text);
};

it('readers of one overdue undecided batch, through the store, abort it with one marker PUT and all see nothing', async () => {
  const { id, entries } = await plantKilledBatch('store');
  const store = await open();
  stores.push(store);
  const counter = countMarkerPuts(id);
  const heads = await Promise.all(entries.map((entry) => store.head(entry)));
  expect(heads).toEqual(entries.map(() => null));
  expect(counter.puts).toBe(1);
  expect(await markerOf(id)).toEqual({ state: 'aborted' });
}, 30_000);

it('16 concurrent state() calls for one overdue undecided batch send one marker PUT and answer the same', async () => {
  const { id, entries } = await plantKilledBatch('state');
  const objects = rawObjects();
  const metadata = await Promise.all(entries.map(async (entry) => (await objects.head(keys.version(addressHash(entry), 1))) as Record<string, string>));
  const markers = freshMarkers();
  const counter = countMarkerPuts(id);
  const fates = await Promise.all(entries.map((entry, i) => markers.state(metadata[i] as Record<string, string>, { hash: addressHash(entry), version: 1 })));
  expect(fates).toEqual(entries.map(() => 'aborted'));
  expect(counter.puts).toBe(1);
  expect(markers.inFlight).toBe(0);
  expect(await markerOf(id)).toEqual({ state: 'aborted' });
}, 30_000);

it('a committed batch whose marker was lost is written again as committed, once, for 16 concurrent readers', async () => {
  const store = await open();
  stores.push(store);
  const entries = Array.from({ length: READERS }, (_, i) => makeEntry({ entity_path: 'herd/lost', key: `k${i}`, version: 1 }));
  await store.appendBatch(entries.map((entry) => ({ entry, expectedHead: 0 })));
  const objects = rawObjects();
  const metadata = await Promise.all(entries.map(async (entry) => (await objects.head(keys.version(addressHash(entry), 1))) as Record<string, string>));
  const id = metadata[0]?.[BATCH_ID] as string;
  expect(new Set(metadata.map((m) => m[BATCH_ID]))).toEqual(new Set([id]));
  expect(await markerOf(id)).toEqual({ state: 'committed' });
  // The marker lost after the commit (deleted by hand, a bucket restored without it); its change objects stay.
  const client = rawClient(s3);
  await client.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: keys.batch(id) }));
  client.destroy();
  expect(await markerOf(id)).toBeNull();
  const deadline = Number(metadata[0]?.[BATCH_DEADLINE]);
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, deadline - Date.now()) + 100));

  const markers = freshMarkers();
  const counter = countMarkerPuts(id);
  const fates = await Promise.all(entries.map((entry, i) => markers.state(metadata[i] as Record<string, string>, { hash: addressHash(entry), version: 1 })));
  expect(fates).toEqual(entries.map(() => 'committed'));
  expect(counter.puts).toBe(1);
  expect(markers.inFlight).toBe(0);
  expect(await markerOf(id)).toEqual({ state: 'committed' });
}, 30_000);
