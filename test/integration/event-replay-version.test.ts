import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson, sha256 } from '../../packages/server/src/domain/content-hash.ts';
import { eventDedupCollection } from '../../packages/server/src/services/retention/dedup-collections.ts';
import { type Cairn, startCairn } from '../helpers/cairn.ts';

/**
 * A replayed event answers the version it made only while that version is still its own. A
 * dedup record an earlier release wrote keeps the version's number alone (no written_at):
 * then the version must be the source's and hold the event's content, else the answer is null.
 */
const dir = await mkdtemp(join(tmpdir(), 'cairn-event-replay-'));
let cairn: Cairn;
beforeAll(async () => {
  cairn = await startCairn({ CAIRN_DATA_DIR: dir });
});
afterAll(async () => {
  await cairn?.close();
  await rm(dir, { recursive: true, force: true });
});

const path = 'alerts/legacy';
const event = (id: string, level: string) => ({ source: 'datadog', entity_path: path, key: 'cpu', value: { level }, event_type: 'alert', event_id: id });
/**
 * Rewrite the event's dedup record as an earlier release wrote it: under `id:<event_id>` (not
 * yet keyed by the address), with the version's number and no written_at.
 */
const makeLegacy = async (id: string): Promise<void> => {
  const collection = eventDedupCollection('default', 'datadog');
  const current = `at:${sha256(canonicalJson([id, path, 'cpu']))}`;
  const record = await cairn.server.store.getRecord(collection, current);
  expect(record?.data.written_at).toEqual(expect.any(String));
  await cairn.server.store.deleteRecord(collection, current);
  await cairn.server.store.putRecord(collection, `id:${id}`, { version: record?.data.version, at: record?.data.at });
};

describe('a replay answered from a dedup record without written_at', () => {
  it('answers the version while it is the event\'s, and null once the number is another\'s', async () => {
    expect((await cairn.call('POST', '/api/v1/events', event('L-1', 'critical'))).body).toMatchObject({ status: 'created', entry: { version: 1 } });
    await makeLegacy('L-1');
    expect((await cairn.call('POST', '/api/v1/events', event('L-1', 'critical'))).body).toMatchObject({ status: 'duplicate', entry: { version: 1, value: { level: 'critical' } } });

    // Forgotten and written again by hand: version 1 is not the source's.
    expect((await cairn.call('POST', '/api/v1/admin/forget', { entity_path: path })).status).toBe(200);
    expect((await cairn.call('POST', '/api/v1/entries', { entity_path: path, key: 'cpu', value: { level: 'critical' }, agent_id: 'ops' })).body).toMatchObject({ entry: { version: 1 } });
    expect((await cairn.call('POST', '/api/v1/events', event('L-1', 'critical'))).body).toEqual({ status: 'duplicate', entry: null });

    // Forgotten and written by another event of the source: its content is not the replay's.
    expect((await cairn.call('POST', '/api/v1/admin/forget', { entity_path: path })).status).toBe(200);
    expect((await cairn.call('POST', '/api/v1/events', event('L-2', 'resolved'))).body).toMatchObject({ status: 'created', entry: { version: 1 } });
    expect((await cairn.call('POST', '/api/v1/events', event('L-1', 'critical'))).body).toEqual({ status: 'duplicate', entry: null });
    expect((await cairn.call('GET', `/api/v1/entries/${path}/cpu`)).body).toMatchObject({ version: 1, value: { level: 'resolved' } });
  });
});
