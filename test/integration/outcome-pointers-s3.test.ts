import { afterAll, beforeAll, expect, it } from 'vitest';
import { sha256 } from '../../packages/server/src/domain/content-hash.ts';
import { evidenceCollection } from '../../packages/server/src/services/judged-entries.ts';
import { type Cairn, startCairn } from '../helpers/cairn.ts';
import { type TestS3Behind, startS3Behind } from '../helpers/s3.ts';

/**
 * An outcome keeps a judged entry's evidence pointer (the record a briefing finds contested and
 * discredited entries by) and removes it when the entry stops being judged; an outcome on an
 * entry that was not judged and is not now touches no pointer. It used to delete one each time:
 * on S3 a request for every success on an untested or validated entry, to find there was none.
 */
let s3: TestS3Behind;
let cairn: Cairn;

beforeAll(async () => {
  s3 = await startS3Behind();
  cairn = await startCairn({ CAIRN_OBJECT_BUCKET: s3.bucket, CAIRN_OBJECT_ENDPOINT: s3.proxy.endpoint, CAIRN_OBJECT_PREFIX: 'pointers/' });
}, 60_000);
afterAll(async () => {
  s3.proxy.onRequest = null;
  await cairn?.close();
  await s3?.stop();
});

it('writes and removes a pointer only where the entry is judged or stops being so', async () => {
  const pointers = `/v1/records/${sha256(evidenceCollection('default'))}/`;
  // Requests for pointer objects, by method (a delete looks first: HEAD, then DELETE when there is one).
  const seen: Record<string, number> = {};
  s3.proxy.onRequest = (method, url) => {
    if (url.includes(pointers)) seen[method] = (seen[method] ?? 0) + 1;
  };
  const ref = { entity_path: 'runbooks/db', key: 'failover' };
  expect((await cairn.call('POST', '/api/v1/entries', { ...ref, value: 'promote the replica, then repoint the pooler' })).status).toBe(201);
  const outcome = async (kind: 'success' | 'failure'): Promise<string> => {
    const res = await cairn.call('POST', '/api/v1/outcomes', { entries: [ref], outcome: kind });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.results[0].evidence.status as string;
  };
  /** The entries the briefing of the path names as contested. */
  const briefed = async (): Promise<string[]> => {
    const res = await cairn.call('GET', `/api/v1/briefing?entity_path=${ref.entity_path}`);
    expect(res.status).toBe(200);
    return (res.body.contested as { key: string }[]).map((j) => j.key);
  };

  // Untested to validated: never judged, no pointer to write or remove.
  expect(await outcome('success')).toBe('validated');
  expect(seen).toEqual({});
  // Judged: its pointer is written, each time (a write that failed before is made good).
  expect(await outcome('failure')).toBe('contested');
  expect(await outcome('failure')).toBe('contested');
  expect(seen).toEqual({ PUT: 2 });
  expect(await briefed()).toEqual(['failover']);
  // Validated again: the pointer goes, once.
  let status = '';
  for (let i = 0; i < 5 && status !== 'validated'; i++) status = await outcome('success');
  expect(status).toBe('validated');
  expect(seen.DELETE).toBe(1);
  expect(await briefed()).toEqual([]);
  const removed = { ...seen };
  expect(await outcome('success')).toBe('validated');
  expect(seen).toEqual(removed);
});
