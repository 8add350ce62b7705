import { createHmac } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cairn, startCairn } from '../helpers/cairn.ts';

const sign = (secret: string, body: string): string => `v1=${createHmac('sha256', secret).update(body).digest('hex')}`;

/** A v3 incident event as PagerDuty sends it (developer.pagerduty.com, "Webhooks v3 Overview"). */
const incidentEvent = (id: string, eventType: string, at: string, status: string, extra: Record<string, unknown> = {}): string =>
  JSON.stringify({
    event: {
      id, event_type: eventType, resource_type: 'incident', occurred_at: at,
      agent: { id: 'PLH1HKV', summary: 'Tenex Engineer', type: 'user_reference' }, client: { name: 'PagerDuty' },
      data: {
        id: 'Q2WXJ3K', type: 'incident', html_url: 'https://acme.pagerduty.com/incidents/Q2WXJ3K', number: 812, status,
        created_at: '2026-11-21T09:00:00Z', title: 'Ledger writes failing — 支払い', urgency: 'high', priority: { summary: 'P1' },
        service: { id: 'PF9KMXH', summary: 'Ledger Service', type: 'service_reference' },
        assignees: [{ id: 'PTUXL6G', summary: 'Dana Ops', type: 'user_reference' }],
        escalation_policy: { id: 'PUS0KTE', summary: 'Ledger on-call', type: 'escalation_policy_reference' },
        resolve_reason: null, ...extra,
      },
    },
  });

describe('PagerDuty webhooks over HTTP', () => {
  let dir: string;
  let cairn: Cairn;
  let secret: string;
  const post = (body: string, signature: string | null) =>
    cairn.call('POST', '/api/v1/webhooks/pagerduty', body, { 'content-type': 'application/json', ...(signature ? { 'x-pagerduty-signature': signature } : {}) });
  const entryUrl = '/api/v1/entries/incidents/pagerduty/Ledger%20Service/incident-Q2WXJ3K';
  const historyUrl = '/api/v1/history/incidents/pagerduty/Ledger%20Service/incident-Q2WXJ3K';
  const versions = async (): Promise<number[]> => {
    const res = await cairn.call('GET', historyUrl);
    return res.status === 404 ? [] : (res.body.versions as Array<{ version: number }>).map((v) => v.version);
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cairn-pd-'));
    cairn = await startCairn({ CAIRN_DATA_DIR: dir });
    // PagerDuty issues the signing secret; Cairn is given it, and refuses to enable without it.
    const refused = await cairn.call('POST', '/api/v1/connectors/pagerduty/enable');
    expect(refused.status).toBe(422);
    expect(refused.body.error.details[0].field).toBe('signing_secret');
    const enabled = await cairn.call('POST', '/api/v1/connectors/pagerduty/enable', { signing_secret: 'pd-issued-secret-0123456789' });
    expect(enabled.status).toBe(200);
    secret = enabled.body.signing_secret;
    expect(secret).toBe('pd-issued-secret-0123456789');
    expect(enabled.body.webhook_url).toMatch(/\/api\/v1\/webhooks\/pagerduty$/);
  });
  afterAll(async () => {
    await cairn?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('stores one incident whose versions are its lifecycle, once per event, and refuses forgeries', async () => {
    const triggered = incidentEvent('01HZ-TRIG', 'incident.triggered', '2026-11-21T09:00:02.000Z', 'triggered');
    const first = await post(triggered, sign(secret, triggered));
    expect(first.status).toBe(202);
    expect(first.body).toMatchObject({ accepted: true, duplicate: false, entries: [{ entity_path: 'incidents/pagerduty/Ledger Service', key: 'incident-Q2WXJ3K', version: 1, created: true }] });
    const entry = await cairn.call('GET', entryUrl);
    expect(entry.status).toBe(200);
    expect(entry.body).toMatchObject({
      version: 1, agent_id: 'external/pagerduty', event_type: 'incident.triggered', confidence: 1, shared: true,
      provenance: { connector: 'pagerduty', delivery_id: '01HZ-TRIG' },
      value: { title: 'Ledger writes failing — 支払い', status: 'triggered', urgency: 'high', priority: 'P1', assignees: ['Dana Ops'], triggered_at: '2026-11-21T09:00:00.000Z' },
    });

    const replay = await post(triggered, sign(secret, triggered));
    expect(replay.status).toBe(200);
    expect(replay.body).toMatchObject({ accepted: true, duplicate: true });
    expect(await versions()).toEqual([1]);

    // A forged acknowledgement is refused and must not mark its event id as seen.
    const acked = incidentEvent('01HZ-ACK', 'incident.acknowledged', '2026-11-21T09:03:00.000Z', 'acknowledged');
    expect((await post(acked, sign('not-the-secret', acked))).status).toBe(401);
    expect((await post(acked, null)).status).toBe(401);
    expect((await post(acked, sign(secret, triggered))).status).toBe(401);
    expect((await post(acked, 'v1=nothex,garbage')).status).toBe(401);
    expect(await versions()).toEqual([1]);

    // Rotation: PagerDuty signs with both secrets, one of them ours.
    expect((await post(acked, `${sign('old-secret', acked)},${sign(secret, acked)}`)).status).toBe(202);
    const resolved = incidentEvent('01HZ-RES', 'incident.resolved', '2026-11-21T09:41:00.000Z', 'resolved', { assignees: [] });
    expect((await post(resolved, sign(secret, resolved))).status).toBe(202);
    // Delivered after the resolution, but it happened before it: the incident stays resolved.
    const escalated = incidentEvent('01HZ-ESC', 'incident.escalated', '2026-11-21T09:20:00.000Z', 'acknowledged', { priority: { summary: 'P0' } });
    expect((await post(escalated, sign(secret, escalated))).status).toBe(202);
    expect((await post(resolved, sign(secret, resolved))).body).toMatchObject({ duplicate: true });

    expect(await versions()).toEqual([4, 3, 2, 1]);
    const final = await cairn.call('GET', entryUrl);
    expect(final.body).toMatchObject({
      version: 4, event_type: 'incident.escalated',
      value: { status: 'resolved', acknowledged_at: '2026-11-21T09:03:00.000Z', resolved_at: '2026-11-21T09:41:00.000Z', assignees: [] },
    });
    expect(final.body.value.timeline.map((t: { event_type: string }) => t.event_type)).toEqual(['incident.triggered', 'incident.acknowledged', 'incident.escalated', 'incident.resolved']);
    const old = await cairn.call('GET', `${entryUrl}?version=2`);
    expect(old.body.value).toMatchObject({ status: 'acknowledged' });
  });

  it('answers pings, acknowledges what it does not capture, and refuses malformed bodies', async () => {
    const ping = JSON.stringify({ event: { id: '01FKZOXA868SHYEE4DVNWB5P9W', event_type: 'pagey.ping', resource_type: 'pagey', occurred_at: '2026-11-21T09:00:00Z', agent: null, client: null, data: { message: 'Hello from your friend Pagey!', type: 'ping' } } });
    const pong = await post(ping, sign(secret, ping));
    expect(pong.status).toBe(200);
    expect(pong.body).toMatchObject({ accepted: true, entries: [] });
    const note = JSON.stringify({ event: { id: '01HZ-NOTE', event_type: 'incident.annotated', occurred_at: '2026-11-21T09:30:00Z', data: { incident: { id: 'Q2WXJ3K', type: 'incident_reference' }, id: 'N1', content: 'Resolved by failover', type: 'incident_note' } } });
    // The incident is known (the lifecycle above): its note lands on its entry.
    const noted = await post(note, sign(secret, note));
    expect(noted.status).toBe(202);
    expect(noted.body).toMatchObject({ accepted: true, entries: [{ key: 'incident-Q2WXJ3K' }, { key: 'note-N1', created: true }] });
    expect((await cairn.call('GET', entryUrl)).body.value.notes).toMatchObject([{ id: 'N1', content: 'Resolved by failover' }]);
    const responder = JSON.stringify({ event: { id: '01HZ-RESP', event_type: 'incident.responder.added', occurred_at: '2026-11-21T09:30:00Z', data: { incident: { id: 'Q2WXJ3K', type: 'incident_reference' }, type: 'incident_responder' } } });
    const ignored = await post(responder, sign(secret, responder));
    expect(ignored.status).toBe(202);
    expect(ignored.body).toMatchObject({ accepted: false, reason: expect.stringContaining('incident_responder') });
    for (const [body, status] of [['{"event":', 400], ['{"event":{"id":"x"}}', 400]] as const) {
      expect((await post(body, sign(secret, body))).status, body).toBe(status);
    }
    const listed = (await cairn.call('GET', '/api/v1/entries?entity_path=incidents/pagerduty')).body.entries;
    expect(listed.map((e: { key: string }) => e.key).sort()).toEqual(['incident-Q2WXJ3K', 'note-N1']);
  });

  it('lands the resolution of an incident with ten 60 kB notes, keeping every note and counting none as lost', async () => {
    const extra = { id: 'Q9BUSY1', service: { id: 'PPAY', summary: 'Payments API', type: 'service_reference' } };
    const url = '/api/v1/entries/incidents/pagerduty/Payments%20API/incident-Q9BUSY1';
    const at = (minute: number) => new Date(Date.parse('2026-11-21T10:00:00Z') + minute * 60_000).toISOString();
    const deliver = async (body: string) => (await post(body, sign(secret, body))).status;
    expect(await deliver(incidentEvent('01HZ-BUSY-TRIG', 'incident.triggered', at(0), 'triggered', extra))).toBe(202);
    // Ten notes of 60 kB (a pasted log each): notes 9 and 10, and the resolution, were refused 413 on every retry.
    for (let i = 1; i <= 10; i++) {
      const content = `${i}: `.padEnd(60_000, 'ERROR pool exhausted after 30000 ms; ');
      const note = JSON.stringify({ event: { id: `01HZ-BUSY-N${i}`, event_type: 'incident.annotated', occurred_at: at(i), agent: { summary: 'Dana Ops' }, data: { incident: { id: 'Q9BUSY1', type: 'incident_reference' }, id: `NB${i}`, content, type: 'incident_note' } } });
      expect(await deliver(note), `note ${i}`).toBe(202);
    }
    expect(await deliver(incidentEvent('01HZ-BUSY-RES', 'incident.resolved', at(11), 'resolved', extra))).toBe(202);
    const stored = (await cairn.call('GET', url)).body.value;
    expect(stored).toMatchObject({ status: 'resolved', resolved_at: at(11) });
    expect(stored.notes.map((n: { id: string }) => n.id)).toEqual(Array.from({ length: 10 }, (_, i) => `NB${i + 1}`));
    expect(stored.notes[0]).toMatchObject({ content_truncated: true, content_chars: 60_000 });
    expect(stored.notes[9].content).toHaveLength(60_000);
    expect(stored.resolution_note).toBe(stored.notes[9].content);
    // The entry keeps the newest text whole and 32 KiB of the others; every note is whole in its own entry.
    expect(Buffer.byteLength(JSON.stringify(stored))).toBeLessThan(2 * 60_000 + 32 * 1024);
    for (let i = 1; i <= 10; i++) {
      const own = (await cairn.call('GET', `/api/v1/entries/incidents/pagerduty/Payments%20API/note-NB${i}`)).body.value;
      expect(own.content, `note ${i}`).toBe(`${i}: `.padEnd(60_000, 'ERROR pool exhausted after 30000 ms; '));
    }
    const log = (await cairn.call('GET', '/api/v1/connectors/pagerduty/deliveries')).body.deliveries as Array<{ delivery_id: string | null; outcome: string }>;
    expect(log.filter((l) => l.delivery_id?.startsWith('01HZ-BUSY')).map((l) => l.outcome)).toEqual(Array(12).fill('written'));
  });
});
