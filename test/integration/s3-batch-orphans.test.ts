import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { VersionConflict } from '../../packages/server/src/domain/errors.ts';
import type { Store } from '../../packages/server/src/ports/store.ts';
import { BATCH_DEADLINE, BATCH_ID } from '../../packages/server/src/store/s3/batch-markers.ts';
import { openS3Store } from '../../packages/server/src/store/s3/index.ts';
import { ObjectKeys, addressHash } from '../../packages/server/src/store/s3/object-keys.ts';
import { makeEntry } from '../contract/store-contract.ts';
import { rawClient, startS3Behind, type TestS3Behind } from '../helpers/s3.ts';

/**
 * What a batch writer killed between its version objects and its commit marker leaves on S3:
 * version objects tagged with a batch that is never decided. They must stay invisible, hold
 * their slot until the batch's deadline, then be aborted by the first reader and passed over.
 */
let s3: TestS3Behind;
let store: Store;
const PREFIX = 'orphans/';
const keys = new ObjectKeys(PREFIX);
const open = () => openS3Store({ bucket: s3.bucket, endpoint: s3.proxy.endpoint, prefix: PREFIX, logger: pino({ level: 'silent' }) });

beforeAll(async () => {
  s3 = await startS3Behind();
  store = await open();
});
afterAll(async () => {
  await store?.close();
  await s3?.stop();
});

/** Plant version `version` of `key` as a crashed batch would have left it. */
const plantOrphan = async (key: string, version: number, deadline: number): Promise<string> => {
  const id = `crashed-${key}`;
  const entry = makeEntry({ key, version, value: { orphan: true } });
  const client = rawClient(s3);
  await client.send(
    new PutObjectCommand({
      Bucket: s3.bucket,
      Key: keys.version(addressHash(entry), version),
      Body: JSON.stringify(entry),
      Metadata: { [BATCH_ID]: id, [BATCH_DEADLINE]: String(deadline) },
    }),
  );
  client.destroy();
  return id;
};

it('hides an undecided batch version and keeps its slot until the deadline', async () => {
  const first = makeEntry({ key: 'held', version: 1 });
  await store.append(first, 0);
  await plantOrphan('held', 2, Date.now() + 60_000);
  expect((await store.head(first))?.version).toBe(1);
  expect(await store.version(first, 2)).toBeNull();
  expect((await store.history(first, { limit: 10 })).map((e) => e.version)).toEqual([1]);
  const error = await store.append(makeEntry({ key: 'held', version: 2 }), 1).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(VersionConflict);
  expect((error as VersionConflict).actual).toBe(1);
});

it('aborts an overdue batch on first sight and writes the version in the next slot, for good', async () => {
  const first = makeEntry({ key: 'freed', version: 1 });
  await store.append(first, 0);
  const id = await plantOrphan('freed', 2, Date.now() - 1);
  expect((await store.head(first))?.version).toBe(1);
  const second = makeEntry({ key: 'freed', version: 2, value: { real: true } });
  await store.append(second, 1);
  const client = rawClient(s3);
  const marker = await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: keys.batch(id) }));
  expect(JSON.parse(await (marker.Body as { transformToString(): Promise<string> }).transformToString())).toEqual({ state: 'aborted' });
  client.destroy();
  store = await (async () => {
    await store.close();
    return open();
  })();
  expect((await store.head(first))?.value).toEqual({ real: true });
  expect((await store.history(first, { limit: 10 })).map((e) => e.value)).toEqual([{ real: true }, first.value]);
  await store.append(makeEntry({ key: 'freed', version: 3 }), 2);
  expect((await store.head(first))?.version).toBe(3);
});
