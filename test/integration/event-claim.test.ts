import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson, sha256 } from '../../packages/server/src/domain/content-hash.ts';
import { STALE_CLAIM_MS } from '../../packages/server/src/services/ingest-event.ts';
import { eventDedupCollection } from '../../packages/server/src/services/retention/dedup-collections.ts';
import { type Cairn, startCairn } from '../helpers/cairn.ts';

/**
 * An event id is claimed before its version is written, so concurrent deliveries write once
 * (test/contract/events-contract.ts). A claim must never lose the event: one whose writer died
 * before writing goes stale and the next delivery takes it over; one released by a writer that
 * failed is claimed again by a delivery waiting on it.
 */
const dir = await mkdtemp(join(tmpdir(), 'cairn-event-claim-'));
let cairn: Cairn;
beforeAll(async () => {
  cairn = await startCairn({ CAIRN_DATA_DIR: dir });
});
afterAll(async () => {
  await cairn?.close();
  await rm(dir, { recursive: true, force: true });
});

const collection = eventDedupCollection('default', 'datadog');
const event = (id: string, path: string) => ({ source: 'datadog', entity_path: path, key: 'cpu', value: { level: 'high' }, event_type: 'alert', event_id: id });
const recordId = (id: string, path: string) => `at:${sha256(canonicalJson([id, path, 'cpu']))}`;

describe('event id claims', () => {
  it('takes over a claim whose writer died before writing', async () => {
    const path = 'alerts/claim-stale';
    const at = new Date(Date.now() - STALE_CLAIM_MS - 1000).toISOString();
    await cairn.server.store.putRecord(collection, recordId('C-1', path), { pending: true, claim: 'dead-writer', at });
    const res = await cairn.call('POST', '/api/v1/events', event('C-1', path));
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect((await cairn.server.store.getRecord(collection, recordId('C-1', path)))?.data).toMatchObject({ version: 1 });
    expect((await cairn.call('POST', '/api/v1/events', event('C-1', path))).body).toMatchObject({ status: 'duplicate', entry: { version: 1 } });
  });

  it('writes the event when the claim it waited on is released by a writer that failed', async () => {
    const path = 'alerts/claim-released';
    await cairn.server.store.putRecord(collection, recordId('C-2', path), { pending: true, claim: 'failing-writer', at: new Date().toISOString() });
    setTimeout(() => void cairn.server.store.deleteRecord(collection, recordId('C-2', path)), 300);
    const res = await cairn.call('POST', '/api/v1/events', event('C-2', path));
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect((await cairn.call('GET', `/api/v1/history/${path}/cpu`)).body.versions).toHaveLength(1);
  });
});
