import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { importArchive } from '../../packages/server/src/services/archive/import-archive.ts';
import { openFromEnv } from '../helpers/archive-fixture.ts';
import { type Cairn, startCairn } from '../helpers/cairn.ts';
import { type Delivery, pagerduty, signDelivery } from '../helpers/provider-events.ts';

/**
 * A PagerDuty note that came before its incident is held (answered 202, so PagerDuty never
 * sends it again). An archive carries the note's delivery id, so it must carry the held note
 * too: else, after a restore, the incident arrives without it and a resend is a duplicate.
 */
const dir = await mkdtemp(join(tmpdir(), 'cairn-archive-held-'));
const SECRET = 'pd-held-secret-0123456789';
const servers: Cairn[] = [];
afterAll(async () => {
  for (const server of servers) await server.close();
  await rm(dir, { recursive: true, force: true });
});

const started = async (dataDir: string): Promise<Cairn> => {
  const cairn = await startCairn({ CAIRN_DATA_DIR: dataDir });
  servers.push(cairn);
  return cairn;
};
const send = (cairn: Cairn, d: Delivery) => cairn.call('POST', '/api/v1/webhooks/pagerduty', d.body, signDelivery(d, SECRET));

/** `incident.annotated` for an incident the server has not seen. */
const note = (incidentId: string, noteId: string, content: string): Delivery => ({
  connector: 'pagerduty',
  headers: {},
  body: JSON.stringify({
    event: {
      id: `ev-${noteId}`, event_type: 'incident.annotated', resource_type: 'incident', occurred_at: '2026-11-21T09:05:00.000Z',
      agent: { id: 'PUSER', summary: 'Dana Ops', type: 'user_reference' },
      data: { incident: { id: incidentId, type: 'incident_reference' }, id: noteId, content, type: 'incident_note' },
    },
  }),
});
const incident = (id: string) => ({ id, service: 'Ledger', title: 'Ledger writes failing', triggered: Date.parse('2026-11-21T09:00:00Z'), assignee: 'Dana Ops' });

describe('held connector deliveries across an export and import', () => {
  it('carries a held note, so the restored server joins it to its incident', async () => {
    const source = await started(join(dir, 'source'));
    expect((await source.call('POST', '/api/v1/connectors/pagerduty/enable', { signing_secret: SECRET })).status).toBe(200);
    // An export of every namespace finds them by their entries.
    expect((await send(source, pagerduty(incident('PEARLIER'), 'triggered', Date.parse('2026-11-21T08:00:00Z')))).status).toBe(202);
    const early = note('PHELD1', 'NHELD1', 'Paged by the ledger canary before PagerDuty told us');
    const held = await send(source, early);
    expect(held.status).toBe(202);
    expect(held.body).toMatchObject({ accepted: true, entries: [] });

    const archive = await (await fetch(`${source.url}/api/v1/admin/export?all=true`)).text();
    expect(archive).toContain('"collection":"connector-held/default/pagerduty"');
    const file = join(dir, 'held.jsonl');
    await writeFile(file, archive);
    const target = await openFromEnv({ CAIRN_DATA_DIR: join(dir, 'target') });
    try {
      await importArchive(target.store, file);
    } finally {
      await target.store.close();
    }

    const restored = await started(join(dir, 'target'));
    // The note's delivery id came along: a resend is still a duplicate...
    expect((await send(restored, early)).body).toMatchObject({ duplicate: true });
    // ...and the note itself too: the incident's first event joins it.
    expect((await send(restored, pagerduty(incident('PHELD1'), 'triggered', Date.parse('2026-11-21T09:06:00Z')))).status).toBe(202);
    const entry = await restored.call('GET', '/api/v1/entries/incidents/pagerduty/Ledger/incident-PHELD1');
    expect(entry.body.value.notes).toMatchObject([{ id: 'NHELD1', content: 'Paged by the ledger canary before PagerDuty told us' }]);
  });

  it('still joins a note held by an earlier release, one collection per incident', async () => {
    const dataDir = join(dir, 'earlier');
    const opened = await openFromEnv({ CAIRN_DATA_DIR: dataDir });
    try {
      await opened.store.createRecord('connector-held/default/pagerduty/incident-POLD1', 'NOLD1', {
        id: 'NOLD1', at: '2026-11-21T09:05:00.000Z', by: 'Dana Ops', content: 'Held before the upgrade',
      });
    } finally {
      await opened.store.close();
    }
    const cairn = await started(dataDir);
    expect((await cairn.call('POST', '/api/v1/connectors/pagerduty/enable', { signing_secret: SECRET })).status).toBe(200);
    expect((await send(cairn, pagerduty(incident('POLD1'), 'triggered', Date.parse('2026-11-21T09:06:00Z')))).status).toBe(202);
    const entry = await cairn.call('GET', '/api/v1/entries/incidents/pagerduty/Ledger/incident-POLD1');
    expect(entry.body.value.notes).toMatchObject([{ id: 'NOLD1', content: 'Held before the upgrade' }]);
    // Released once joined.
    await cairn.close();
    servers.splice(servers.indexOf(cairn), 1);
    const after = await openFromEnv({ CAIRN_DATA_DIR: dataDir });
    try {
      expect(await after.store.getRecord('connector-held/default/pagerduty/incident-POLD1', 'NOLD1')).toBeNull();
    } finally {
      await after.store.close();
    }
  });
});
