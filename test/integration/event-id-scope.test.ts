import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cairn, startCairn } from '../helpers/cairn.ts';

/**
 * An event id names one event at one address. Kept per namespace and source alone, a key
 * confined to `incidents` could post an id first under its own paths, and the real event,
 * sent later by another writer to a path the key cannot see, was answered "duplicate" and
 * dropped; the key could also test which ids had been used where it cannot read.
 */
const ADMIN = 'event-scope-admin-key-0123';
const dir = await mkdtemp(join(tmpdir(), 'cairn-event-scope-'));
let cairn: Cairn;
let confined: string;
beforeAll(async () => {
  cairn = await startCairn({ CAIRN_DATA_DIR: dir, CAIRN_API_KEYS: ADMIN });
  const issued = await cairn.call('POST', '/api/v1/admin/keys', { name: 'incident-bot', scopes: ['read', 'write'], prefixes: ['incidents'] }, { 'x-cairn-api-key': ADMIN });
  confined = issued.body.key as string;
});
afterAll(async () => {
  await cairn?.close();
  await rm(dir, { recursive: true, force: true });
});

const post = (key: string, body: Record<string, unknown>) => cairn.call('POST', '/api/v1/events', { source: 'hr', event_type: 'raise', ...body }, { 'x-cairn-api-key': key });

describe('event ids and confined keys', () => {
  it('lets no key take, or test for, an event id used at an address it cannot see', async () => {
    // The confined key posts the id first, under its own paths.
    expect((await post(confined, { entity_path: 'incidents/squat', key: 'k', value: 'taken', event_id: 'next-1' })).status).toBe(201);
    // The real event, later, elsewhere: stored.
    const real = await post(ADMIN, { entity_path: 'secrets/payroll', key: 'raise-1', value: 'a raise', event_id: 'next-1' });
    expect(real.status, JSON.stringify(real.body)).toBe(201);
    expect((await cairn.call('GET', '/api/v1/entries/secrets/payroll/raise-1', undefined, { 'x-cairn-api-key': ADMIN })).body).toMatchObject({ value: 'a raise' });
    // An id used only under secrets/ reads as new at the confined key's paths: nothing learnt.
    expect((await post(ADMIN, { entity_path: 'secrets/payroll', key: 'raise-2', value: 'another', event_id: 'next-2' })).status).toBe(201);
    const probe = await post(confined, { entity_path: 'incidents/probe', key: 'k', value: 'probe', event_id: 'next-2' });
    expect(probe.status).toBe(201);
    expect(probe.body.status).toBe('created');
    // A replay at its own address is still a duplicate.
    expect((await post(ADMIN, { entity_path: 'secrets/payroll', key: 'raise-1', value: 'a raise', event_id: 'next-1' })).body).toMatchObject({ status: 'duplicate' });
  });
});
