import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson, sha256 } from '../../packages/server/src/domain/content-hash.ts';
import { STALE_CLAIM_MS } from '../../packages/server/src/services/claim-once.ts';
import { deliveryDedupCollection, eventDedupCollection } from '../../packages/server/src/services/retention/dedup-collections.ts';
import { type Cairn, startCairn } from '../helpers/cairn.ts';
import { pagerduty, signDelivery } from '../helpers/provider-events.ts';

/**
 * An event id, and a connector's delivery id, is claimed before its versions are written, so
 * concurrent deliveries write once (test/contract/events-contract.ts). A claim must never lose
 * the delivery: one whose writer died before writing goes stale and the next delivery takes it
 * over; one released by a writer that failed is claimed again by a delivery waiting on it.
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

describe('connector delivery claims', () => {
  const secret = 'pd-claim-secret-0123456789';
  const deliveries = deliveryDedupCollection('default', 'pagerduty');
  const incident = (id: string) => ({ id, service: `claims-${id}`, title: 'Disk full', triggered: Date.parse('2026-11-21T09:00:00Z'), assignee: 'Dana' });
  const deliveryId = (body: string): string => JSON.parse(body).event.id;
  beforeAll(async () => {
    expect((await cairn.call('POST', '/api/v1/connectors/pagerduty/enable', { signing_secret: secret })).status).toBe(200);
  });

  it('takes over a claim whose writer died before writing', async () => {
    const d = pagerduty(incident('PCLAIM1'), 'triggered', Date.parse('2026-11-21T09:00:00Z'));
    const at = new Date(Date.now() - STALE_CLAIM_MS - 1000).toISOString();
    await cairn.server.store.putRecord(deliveries, deliveryId(d.body), { pending: true, claim: 'dead-writer', at });
    const res = await cairn.call('POST', '/api/v1/webhooks/pagerduty', d.body, signDelivery(d, secret));
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect((await cairn.call('GET', '/api/v1/entries/incidents/pagerduty/claims-PCLAIM1/incident-PCLAIM1')).status).toBe(200);
    const replay = await cairn.call('POST', '/api/v1/webhooks/pagerduty', d.body, signDelivery(d, secret));
    expect(replay.status).toBe(200);
    expect(replay.body).toMatchObject({ duplicate: true });
  });

  it('waits on a claim in progress and answers what its writer wrote, writing nothing', async () => {
    const d = pagerduty(incident('PCLAIM2'), 'triggered', Date.parse('2026-11-21T09:00:00Z'));
    const id = deliveryId(d.body);
    await cairn.server.store.putRecord(deliveries, id, { pending: true, claim: 'live-writer', at: new Date().toISOString() });
    const written = [{ entity_path: 'incidents/pagerduty/claims-PCLAIM2', key: 'incident-PCLAIM2', version: 1, created: true }];
    setTimeout(() => void cairn.server.store.putRecord(deliveries, id, { entries: written, at: new Date().toISOString() }), 300);
    const res = await cairn.call('POST', '/api/v1/webhooks/pagerduty', d.body, signDelivery(d, secret));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ duplicate: true, entries: written });
    expect((await cairn.call('GET', '/api/v1/entries/incidents/pagerduty/claims-PCLAIM2/incident-PCLAIM2')).status).toBe(404);
  });

  it('waits on a live claim stamped by a replica whose clock runs slow, instead of writing too', async () => {
    const d = pagerduty(incident('PCLAIM4'), 'triggered', Date.parse('2026-11-21T09:00:00Z'));
    const id = deliveryId(d.body);
    // Stamped 20 s ago by its own clock: stale by the stamp, but its writer is at work.
    const at = new Date(Date.now() - STALE_CLAIM_MS - 5000).toISOString();
    await cairn.server.store.putRecord(deliveries, id, { pending: true, claim: 'slow-clock-writer', at });
    const written = [{ entity_path: 'incidents/pagerduty/claims-PCLAIM4', key: 'incident-PCLAIM4', version: 1, created: true }];
    setTimeout(() => void cairn.server.store.putRecord(deliveries, id, { entries: written, at }), 500);
    const res = await cairn.call('POST', '/api/v1/webhooks/pagerduty', d.body, signDelivery(d, secret));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ duplicate: true, entries: written });
  });

  it('writes the delivery when the claim it waited on is released by a writer that failed', async () => {
    const d = pagerduty(incident('PCLAIM3'), 'triggered', Date.parse('2026-11-21T09:00:00Z'));
    const id = deliveryId(d.body);
    await cairn.server.store.putRecord(deliveries, id, { pending: true, claim: 'failing-writer', at: new Date().toISOString() });
    setTimeout(() => void cairn.server.store.deleteRecord(deliveries, id), 300);
    const res = await cairn.call('POST', '/api/v1/webhooks/pagerduty', d.body, signDelivery(d, secret));
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect((await cairn.call('GET', '/api/v1/history/incidents/pagerduty/claims-PCLAIM3/incident-PCLAIM3')).body.versions).toHaveLength(1);
  });
});
