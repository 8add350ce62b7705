import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BATCH_DEADLINE, BATCH_ID } from '../../packages/server/src/store/s3/batch-markers.ts';
import { openS3Store } from '../../packages/server/src/store/s3/index.ts';
import { ObjectKeys, addressHash } from '../../packages/server/src/store/s3/object-keys.ts';
import type { S3Store } from '../../packages/server/src/store/s3/s3-store.ts';
import { makeEntry } from '../contract/store-contract.ts';
import { rawClient, startS3Behind, type TestS3Behind } from '../helpers/s3.ts';

/**
 * Objects of the bucket damaged or lost after the store wrote them (by hand, a restore, another
 * program): a replica that starts afterwards must refuse, naming the object, or read what the
 * damage hides from another copy, never answer as if the write had not happened.
 */
let s3: TestS3Behind;
let raw: S3Client;
const opened: S3Store[] = [];
const open = async (prefix: string): Promise<S3Store> => {
  const store = await openS3Store({ bucket: s3.bucket, endpoint: s3.proxy.endpoint, prefix, logger: pino({ level: 'silent' }) });
  opened.push(store);
  return store;
};

beforeAll(async () => {
  s3 = await startS3Behind();
  raw = rawClient(s3);
});
afterAll(async () => {
  for (const store of opened) await store.close().catch(() => {});
  raw?.destroy();
  await s3?.stop();
});

const list = async (prefix: string): Promise<string[]> => {
  const out = await raw.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: prefix }));
  return (out.Contents ?? []).map((o) => o.Key as string);
};
const get = async (key: string): Promise<{ text: string; metadata: Record<string, string> }> => {
  const out = await raw.send(new GetObjectCommand({ Bucket: s3.bucket, Key: key }));
  return { text: await (out.Body as { transformToString(): Promise<string> }).transformToString(), metadata: out.Metadata ?? {} };
};
const put = (key: string, body: string, metadata: Record<string, string> = {}) => raw.send(new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: body, Metadata: metadata }));
const remove = (key: string) => raw.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: key }));
const exists = (key: string) => raw.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: key })).then(() => true, () => false);

/** A committed two-item batch, its version objects made overdue (as if 20 s had passed), its marker key. */
const committedBatch = async (prefix: string, key: string) => {
  const keys = new ObjectKeys(prefix);
  const store = await open(prefix);
  const items = [makeEntry({ key: `${key}-a`, version: 1 }), makeEntry({ key: `${key}-b`, version: 1 })];
  await store.appendBatch(items.map((entry) => ({ entry, expectedHead: 0 })));
  await store.close();
  let marker = '';
  for (const entry of items) {
    const versionKey = keys.version(addressHash(entry), 1);
    const { text, metadata } = await get(versionKey);
    marker = keys.batch(metadata[BATCH_ID] as string);
    await put(versionKey, text, { ...metadata, [BATCH_DEADLINE]: String(Date.now() - 1) });
  }
  return { items, marker, keys };
};

it('keeps a committed batch whose marker was lost, and writes the marker again', async () => {
  const { items, marker } = await committedBatch('lost-marker/', 'lost');
  await remove(marker);
  const replica = await open('lost-marker/');
  for (const entry of items) {
    expect((await replica.history(entry, { limit: 10 })).map((e) => e.version)).toEqual([1]);
    expect((await replica.version(entry, 1))?.value).toEqual(entry.value);
  }
  expect(JSON.parse((await get(marker)).text)).toEqual({ state: 'committed' });
  // The next write builds on version 1, not over it.
  await replica.append(makeEntry({ key: 'lost-a', version: 2 }), 1);
  expect((await replica.history(items[0]!, { limit: 10 })).map((e) => e.version)).toEqual([2, 1]);
});

it('refuses, naming the marker, a batch marker that says neither committed nor aborted', async () => {
  const { items, marker } = await committedBatch('bad-marker/', 'bad');
  await put(marker, '{"state":"commit');
  const replica = await open('bad-marker/');
  // (The head's content came with the change log; the history is read from the version objects.)
  await expect(replica.history(items[0]!, { limit: 10 })).rejects.toThrow(marker);
  await expect(replica.history(items[1]!, { limit: 10 })).rejects.toThrow(marker);
  // Never overwritten by a reader.
  expect((await get(marker)).text).toBe('{"state":"commit');
});

it('still aborts an overdue batch that never committed (no marker, no change objects)', async () => {
  const prefix = 'never-committed/';
  const keys = new ObjectKeys(prefix);
  const store = await open(prefix);
  const entry = makeEntry({ key: 'orphan', version: 1 });
  await put(keys.version(addressHash(entry), 1), JSON.stringify(entry), { [BATCH_ID]: 'crashed', [BATCH_DEADLINE]: String(Date.now() - 1), 'cairn-written-at': entry.written_at });
  expect(await store.version(entry, 1)).toBeNull();
  expect(JSON.parse((await get(keys.batch('crashed'))).text)).toEqual({ state: 'aborted' });
});

it('reads a damaged change object back from the version its key names', async () => {
  const prefix = 'bad-change/';
  const keys = new ObjectKeys(prefix);
  const writer = await open(prefix);
  const entry = makeEntry({ key: 'changed', version: 1, value: { kept: true } });
  await writer.append(entry, 0);
  await writer.close();
  const [change] = await list(keys.changesPrefix);
  await put(change as string, '{"namespace":"default","entity_pa');
  const replica = await open(prefix);
  expect((await replica.list({ namespace: 'default', limit: 10, now: Date.now() })).entries.map((e) => e.key)).toContain('changed');
  // Its version damaged as well: nothing left to read it from, so the replica refuses to start.
  await put(keys.version(addressHash(entry), 1), '{"namespace":');
  await expect(open(prefix)).rejects.toThrow(keys.version(addressHash(entry), 1));
});

it('refuses a change log object that is no change and names no version', async () => {
  const prefix = 'foreign-change/';
  const keys = new ObjectKeys(prefix);
  const key = keys.change(Date.now(), 'abcdef', 1);
  await put(key, '{"version":1,"hello":"world"}');
  await expect(open(prefix)).rejects.toThrow(key);
});

it('applies no foreign object shaped like a change under a version name that holds no version', async () => {
  const prefix = 'foreign-named/';
  const keys = new ObjectKeys(prefix);
  await put(keys.change(Date.now(), 'abcdef', 1, { hash: 'ab'.repeat(32), version: 1 }), '{"version":1,"namespace":"default"}');
  const replica = await open(prefix);
  expect((await replica.list({ namespace: 'default', limit: 10, now: Date.now() })).entries).toEqual([]);
});

it('starts past a damaged snapshot, from an older one or the whole change log, and forgets past it', async () => {
  const prefix = 'bad-snapshot/';
  const keys = new ObjectKeys(prefix);
  const writer = await open(prefix);
  const entry = makeEntry({ key: 'snapped', entity_path: 'snap/one', version: 1 });
  await writer.append(entry, 0);
  await writer.close();
  const snapshot = keys.snapshot(Date.now(), 'abcdef');
  await put(snapshot, '{"format":1,"watermark_ms":1,"entries":[{"namesp');
  const replica = await open(prefix);
  expect((await replica.head(entry))?.version).toBe(1);
  expect((await replica.list({ namespace: 'default', limit: 10, now: Date.now() })).entries.map((e) => e.key)).toEqual(['snapped']);
  expect((await replica.forget({ namespace: 'default', prefix: 'snap' })).map((a) => a.key)).toEqual(['snapped']);
  expect(await exists(snapshot)).toBe(false);
});

it('refuses a damaged version or record object, naming it', async () => {
  const prefix = 'bad-version/';
  const keys = new ObjectKeys(prefix);
  const store = await open(prefix);
  const entry = makeEntry({ key: 'rotten', version: 1 });
  await store.append(entry, 0);
  await store.append(makeEntry({ key: 'rotten', version: 2 }), 1);
  const versionKey = keys.version(addressHash(entry), 1);
  await put(versionKey, '{"namespace":"default","entity_path":"repos/acme/api","ke');
  await expect(store.version(entry, 1)).rejects.toThrow(versionKey);
  await expect(store.history(entry, { limit: 10 })).rejects.toThrow(/CorruptDataError|is damaged/);
  await store.putRecord('things', 'one', { a: 1 });
  const [recordKey] = await list(`${prefix}v1/records/`);
  await put(recordKey as string, '{"id":"one","da');
  await expect(store.getRecord('things', 'one')).rejects.toThrow(recordKey as string);
});
