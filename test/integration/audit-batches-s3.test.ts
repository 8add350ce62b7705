import { afterAll, beforeAll, expect, it } from 'vitest';
import { sha256 } from '../../packages/server/src/domain/content-hash.ts';
import { auditCollection } from '../../packages/server/src/services/audit-log.ts';
import { type Cairn, startCairn } from '../helpers/cairn.ts';
import { type TestS3Behind, startS3Behind } from '../helpers/s3.ts';

/**
 * On S3 the audit log gathers events for the backend's window (250 ms, store/s3/backend.ts)
 * before it stores them: each stored batch is a PUT. With the filesystem's 10 ms, writes made
 * one at a time each stored a batch of their own (0.9 audit PUTs a write). None of the events
 * is lost or reordered for it: the log, read through the server, has every write's.
 */
let s3: TestS3Behind;
let cairn: Cairn;

beforeAll(async () => {
  s3 = await startS3Behind();
  cairn = await startCairn({ CAIRN_OBJECT_BUCKET: s3.bucket, CAIRN_OBJECT_ENDPOINT: s3.proxy.endpoint, CAIRN_OBJECT_PREFIX: 'audit-batches/' });
}, 60_000);
afterAll(async () => {
  s3.proxy.onRequest = null;
  await cairn?.close();
  await s3?.stop();
});

it('stores the events of writes made one at a time a few batches to a PUT, losing none', async () => {
  const batches = `/v1/records/${sha256(auditCollection('default'))}/`;
  let puts = 0;
  s3.proxy.onRequest = (method, url) => {
    if (method === 'PUT' && url.includes(batches)) puts += 1;
  };
  const WRITES = 20;
  const started = Date.now();
  for (let i = 0; i < WRITES; i++) {
    expect((await cairn.call('POST', '/api/v1/entries', { entity_path: 'audit/batches', key: `k${i}`, value: `write ${i}` })).status).toBe(201);
  }
  const elapsed = Date.now() - started;
  const log = await cairn.call('GET', '/api/v1/admin/audit?action=entry.written&limit=100');
  expect(log.status, JSON.stringify(log.body)).toBe(200);
  // Newest first, every write's event.
  const keys = log.body.events.map((e: { target: { key: string } }) => e.target.key);
  expect(keys).toEqual(Array.from({ length: WRITES }, (_, i) => `k${WRITES - 1 - i}`));
  // A batch per 250 ms of writing at most (and one the read above stored), where a 10 ms
  // window stored nearly one a write; bounded by the writes too, should they be that slow.
  expect(puts).toBeLessThanOrEqual(Math.min(WRITES - 5, Math.ceil(elapsed / 250) + 2));
});
