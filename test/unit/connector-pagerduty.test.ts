import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Delivery, MappedWrite, Outcome, Recollection } from '../../packages/server/src/connectors/connector.ts';
import { MAX_TIMELINE } from '../../packages/server/src/connectors/lifecycle.ts';
import { INCIDENT_NOTES, INCIDENT_TIMELINE, NOTE_PREVIEW_CHARS, NOTE_TEXT_BYTES } from '../../packages/server/src/connectors/pagerduty/budget.ts';
import { pagerduty } from '../../packages/server/src/connectors/pagerduty/index.ts';
import { INCIDENTS } from '../../packages/server/src/cortex/digests/incidents.ts';
import type { Entry, EntryValue } from '../../packages/server/src/domain/entry.ts';
import { LIMITS } from '../../packages/server/src/domain/limits.ts';
import { entityPathProblem, keyProblem } from '../../packages/server/src/domain/names.ts';
import { serviceErrorOf } from '../helpers/service-error.ts';

const SECRET = 'pd-secret-Zq8wX';
const sign = (secret: string, body: string | Buffer): string => `v1=${createHmac('sha256', secret).update(body).digest('hex')}`;
const delivery = (body: string | Buffer, headers: Record<string, string> = {}): Delivery => ({
  headers: { 'content-type': 'application/json', ...headers },
  body: Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8'),
  // Received after every event below: a time past the receipt (plus 5 min) counts as that bound (lifecycle.ts).
  now: Date.parse('2026-11-23T00:00:00Z'),
});

/** An `incident` event shaped like the example in PagerDuty's "Webhooks v3 Overview". */
const incidentEvent = (id: string, eventType: string, at: string, data: Record<string, unknown> = {}) =>
  JSON.stringify({
    event: {
      id, event_type: eventType, resource_type: 'incident', occurred_at: at,
      agent: { html_url: 'https://acme.pagerduty.com/users/PLH1HKV', id: 'PLH1HKV', self: 'https://api.pagerduty.com/users/PLH1HKV', summary: 'Tenex Engineer', type: 'user_reference' },
      client: { name: 'PagerDuty' },
      data: {
        id: 'PGR0VU2', type: 'incident', self: 'https://api.pagerduty.com/incidents/PGR0VU2', html_url: 'https://acme.pagerduty.com/incidents/PGR0VU2',
        number: 2, status: 'triggered', incident_key: 'd3640fbd41094207a1c11e58e46b1662', created_at: '2026-11-21T09:00:00Z',
        title: 'Checkout latency above 2s',
        service: { html_url: 'https://acme.pagerduty.com/services/PF9KMXH', id: 'PF9KMXH', self: 'https://api.pagerduty.com/services/PF9KMXH', summary: 'Checkout API', type: 'service_reference' },
        assignees: [{ html_url: 'https://acme.pagerduty.com/users/PTUXL6G', id: 'PTUXL6G', self: 'https://api.pagerduty.com/users/PTUXL6G', summary: 'Dana Ops', type: 'user_reference' }],
        escalation_policy: { html_url: 'https://acme.pagerduty.com/escalation_policies/PUS0KTE', id: 'PUS0KTE', summary: 'Checkout on-call', type: 'escalation_policy_reference' },
        teams: [{ id: 'PFCVPS0', summary: 'Payments', type: 'team_reference' }],
        priority: { id: 'PSO75BM', summary: 'P1', type: 'priority_reference' },
        urgency: 'high',
        conference_bridge: { conference_number: '+1 1234123412,,987654321#', conference_url: 'https://example.com/bridge' },
        resolve_reason: null,
        ...data,
      },
    },
  });

const TRIGGERED = incidentEvent('01EV-TRIG', 'incident.triggered', '2026-11-21T09:00:05.000Z');
const ACKED = incidentEvent('01EV-ACK', 'incident.acknowledged', '2026-11-21T09:04:05.000Z', { status: 'acknowledged' });
const ESCALATED = incidentEvent('01EV-ESC', 'incident.escalated', '2026-11-21T09:10:00.000Z', {
  status: 'acknowledged', assignees: [{ id: 'PX', summary: 'Lee Senior', type: 'user_reference' }], priority: { summary: 'P0' },
});
const RESOLVED = incidentEvent('01EV-RES', 'incident.resolved', '2026-11-21T09:30:05.000Z', {
  status: 'resolved', assignees: [], priority: { summary: 'P0' }, resolve_reason: { type: 'merge_resolve_reason', incident: { id: 'PMAIN01', summary: 'Checkout outage' } },
});

const handle = (body: string, headers: Record<string, string> = {}): Outcome => pagerduty.handle(delivery(body, headers), {});
const writeOf = (body: string): MappedWrite => {
  const outcome = handle(body);
  if (outcome.kind !== 'writes' || outcome.writes.length !== 1) throw new Error(`expected one write, got ${JSON.stringify(outcome)}`);
  return outcome.writes[0] as MappedWrite;
};
/** What the store does with successive deliveries: each update sees the previous value. */
const fold = (bodies: string[], start: EntryValue | null = null): EntryValue | null =>
  bodies.reduce<EntryValue | null>((current, body) => {
    const write = writeOf(body);
    if (!write.update) throw new Error('incident writes must be updates');
    return write.update(current);
  }, start);
const fields = (value: EntryValue | null): Record<string, unknown> => {
  if (value === null || typeof value !== 'object') throw new Error('expected an object value');
  return value;
};

describe('PagerDuty connector: signatures', () => {
  const body = TRIGGERED;
  const verify = (header: string | undefined, raw: string | Buffer = body) =>
    pagerduty.verify(delivery(raw, header === undefined ? {} : { 'x-pagerduty-signature': header }), SECRET);

  it('accepts the HMAC-SHA256 of the raw body and refuses everything else', () => {
    expect(verify(sign(SECRET, body))).toBeNull();
    expect(verify(sign('another-secret', body))).toMatch(/does not match/);
    expect(verify(undefined)).toMatch(/missing X-PagerDuty-Signature/);
    expect(verify('')).toMatch(/missing/);
    expect(verify(sign(SECRET, `${body} `))).toMatch(/does not match/);
    expect(verify(sign(SECRET, body), body.replace('Checkout', 'Checkin'))).toMatch(/does not match/);
  });

  it('passes when any of several v1 signatures matches, as during secret rotation', () => {
    expect(verify(`${sign('old-secret', body)},${sign(SECRET, body)}`)).toBeNull();
    expect(verify(`${sign(SECRET, body)}, ${sign('old-secret', body)}`)).toBeNull();
    expect(verify(`v0=abc,${sign(SECRET, body)}`)).toBeNull();
    expect(verify(`${sign('a', body)},${sign('b', body)}`)).toMatch(/does not match/);
  });

  it('refuses malformed headers without throwing', () => {
    const hex = sign(SECRET, body).slice(3);
    for (const header of [hex, `sha256=${hex}`, 'v1=', 'v1=zz', `v1=${hex.slice(2)}`, `V1=${hex}`, ',,,', `v2=${hex}`, `v1=${'0'.repeat(64)}`, Array(20).fill(`v1=${hex}`).join(',')]) {
      expect(verify(header), header).not.toBeNull();
    }
  });

  it('signs bytes, not characters: a UTF-8 body verifies only as sent', () => {
    const unicode = incidentEvent('01EV-U', 'incident.triggered', '2026-11-21T09:00:05.000Z', { title: 'Paiement échoué — 支付失败 😱' });
    const bytes = Buffer.from(unicode, 'utf8');
    expect(verify(sign(SECRET, bytes), bytes)).toBeNull();
    expect(verify(sign(SECRET, Buffer.from(unicode, 'latin1')), bytes)).not.toBeNull();
  });
});

describe('PagerDuty connector: mapping', () => {
  it('files an incident under its service, keyed by id, with the PagerDuty event type', () => {
    const outcome = handle(TRIGGERED);
    expect(outcome).toMatchObject({ kind: 'writes', deliveryId: '01EV-TRIG' });
    const write = writeOf(TRIGGERED);
    expect(write).toMatchObject({ entity_path: 'incidents/pagerduty/Checkout API', key: 'incident-PGR0VU2', event_type: 'incident.triggered', confidence: 1 });
    expect(write.value).toBeUndefined();
    expect(fold([TRIGGERED])).toMatchObject({
      id: 'PGR0VU2', number: 2, title: 'Checkout latency above 2s', status: 'triggered', urgency: 'high', priority: 'P1',
      service: { id: 'PF9KMXH', name: 'Checkout API' }, escalation_policy: 'Checkout on-call', assignees: ['Dana Ops'], teams: ['Payments'],
      html_url: 'https://acme.pagerduty.com/incidents/PGR0VU2', resolution: null,
      triggered_at: '2026-11-21T09:00:00.000Z', acknowledged_at: null, resolved_at: null,
      timeline: [{ id: '01EV-TRIG', event_type: 'incident.triggered', status: 'triggered', at: '2026-11-21T09:00:05.000Z', by: 'Tenex Engineer' }],
    });
  });

  it('merges the lifecycle into one value: responders, priority, resolution and MTTA/MTTR anchors', () => {
    const value = fields(fold([TRIGGERED, ACKED, ESCALATED, RESOLVED]));
    expect(value).toMatchObject({
      status: 'resolved', priority: 'P0', assignees: [],
      resolution: { type: 'merge_resolve_reason', merged_into: 'PMAIN01', merged_into_title: 'Checkout outage' },
      triggered_at: '2026-11-21T09:00:00.000Z', acknowledged_at: '2026-11-21T09:04:05.000Z', resolved_at: '2026-11-21T09:30:05.000Z',
      last_event_id: '01EV-RES',
    });
    expect((value.timeline as Array<{ event_type: string }>).map((t) => t.event_type)).toEqual(['incident.triggered', 'incident.acknowledged', 'incident.escalated', 'incident.resolved']);
  });

  it('does not let a late acknowledgement regress a resolved incident', () => {
    const value = fields(fold([TRIGGERED, RESOLVED, ACKED]));
    expect(value).toMatchObject({ status: 'resolved', acknowledged_at: '2026-11-21T09:04:05.000Z', resolved_at: '2026-11-21T09:30:05.000Z' });
    expect((value.timeline as Array<{ id: string }>).map((t) => t.id)).toEqual(['01EV-TRIG', '01EV-ACK', '01EV-RES']);
  });

  it('reaches the same value whatever order the events arrive in', () => {
    const events = [TRIGGERED, ACKED, ESCALATED, RESOLVED];
    const expected = JSON.stringify(fold(events));
    const orders = [[3, 2, 1, 0], [1, 3, 0, 2], [2, 0, 3, 1], [0, 3, 1, 2]];
    for (const order of orders) expect(JSON.stringify(fold(order.map((i) => events[i] as string)))).toBe(expected);
  });

  it('is idempotent: a replayed event leaves the value exactly as it was', () => {
    const once = fold([TRIGGERED, ACKED, RESOLVED]);
    expect(fold([ACKED], once)).toEqual(once);
    expect(fold([RESOLVED, TRIGGERED], once)).toEqual(once);
  });

  it('clears resolved_at when an incident reopens, and sets it again on the next resolution', () => {
    const reopened = incidentEvent('01EV-REO', 'incident.reopened', '2026-11-21T10:00:00.000Z', { status: 'triggered' });
    const again = incidentEvent('01EV-RES2', 'incident.resolved', '2026-11-21T11:00:00.000Z', { status: 'resolved' });
    expect(fold([TRIGGERED, RESOLVED, reopened])).toMatchObject({ status: 'triggered', resolved_at: null });
    expect(fold([TRIGGERED, RESOLVED, reopened, again])).toMatchObject({ status: 'resolved', resolved_at: '2026-11-21T11:00:00.000Z' });
  });

  it('bounds the timeline of a long-running incident to its newest entries, counting the rest', () => {
    const start = Date.parse('2026-11-21T09:00:00Z');
    const many = Array.from({ length: MAX_TIMELINE + 40 }, (_, i) =>
      incidentEvent(`EV-${String(i).padStart(4, '0')}`, 'incident.escalated', new Date(start + i * 60_000).toISOString()));
    const value = fields(fold(many));
    const timeline = value.timeline as Array<{ id: string }>;
    expect(timeline).toHaveLength(INCIDENT_TIMELINE);
    expect(value.timeline_omitted).toBe(MAX_TIMELINE + 40 - INCIDENT_TIMELINE);
    expect(timeline[0]?.id).toBe(`EV-${String(MAX_TIMELINE + 40 - INCIDENT_TIMELINE).padStart(4, '0')}`);
    expect(timeline.at(-1)?.id).toBe(`EV-${String(MAX_TIMELINE + 39).padStart(4, '0')}`);
    // An event it let go, delivered again, is neither added back nor counted twice.
    expect(fold([many[3] as string], value)).toEqual(value);
  });
});

/** A note as `incident.annotated` carries it: a reference to its incident, no service. */
const annotated = (eventId: string, noteId: string, at: string, content: string, incidentId = 'PGR0VU2') =>
  JSON.stringify({
    event: {
      id: eventId, event_type: 'incident.annotated', resource_type: 'incident', occurred_at: at,
      agent: { id: 'PTUXL6G', summary: 'Dana Ops', type: 'user_reference' }, client: null,
      data: {
        incident: { html_url: `https://acme.pagerduty.com/incidents/${incidentId}`, id: incidentId, summary: 'Checkout latency above 2s', type: 'incident_reference' },
        id: noteId, content, trimmed: false, type: 'incident_note',
      },
    },
  });
const KNOWN: Recollection = { facts: new Map([['incident-PGR0VU2', { entity_path: 'incidents/pagerduty/Checkout API' }]]), held: new Map() };
const NOTHING: Recollection = { facts: new Map(), held: new Map() };

describe('PagerDuty connector: notes', () => {
  const NOTE = annotated('01EV-NOTE', 'PNOTE1', '2026-11-21T09:31:00.000Z', 'Root cause: pool exhausted; raised the limit to 200.');

  it('asks to recall where the incident lives, and for held notes on incident events', () => {
    expect(pagerduty.wants?.(delivery(NOTE))).toEqual({ facts: ['incident-PGR0VU2'], held: [] });
    expect(pagerduty.wants?.(delivery(TRIGGERED))).toEqual({ facts: ['incident-PGR0VU2'], held: ['incident-PGR0VU2'] });
    expect(pagerduty.wants?.(delivery(annotated('E', 'N', '2026-11-21T09:31:00Z', 'x', '../../x')))).toEqual({ facts: [], held: [] });
  });

  it('adds a note to its known incident, and names the last note of a resolved incident its resolution note', () => {
    const outcome = pagerduty.handle(delivery(NOTE), {}, KNOWN);
    if (outcome.kind !== 'writes') throw new Error(JSON.stringify(outcome));
    const write = outcome.writes[0] as MappedWrite;
    expect(write).toMatchObject({ entity_path: 'incidents/pagerduty/Checkout API', key: 'incident-PGR0VU2', event_type: 'incident.annotated' });
    const resolved = fold([TRIGGERED, ACKED, RESOLVED]);
    const value = fields(write.update?.(resolved) ?? null);
    expect(value).toMatchObject({
      status: 'resolved', resolution_note: 'Root cause: pool exhausted; raised the limit to 200.',
      notes: [{ id: 'PNOTE1', at: '2026-11-21T09:31:00.000Z', by: 'Dana Ops', content: 'Root cause: pool exhausted; raised the limit to 200.' }],
    });
    // Idempotent, and a later incident event keeps the notes.
    expect(write.update?.(value)).toEqual(value);
    expect(fold([ACKED], value)).toEqual(value);
    // An open incident has notes but no resolution note yet.
    expect(fields(write.update?.(fold([TRIGGERED])) ?? null)).toMatchObject({ resolution_note: null, notes: [{ id: 'PNOTE1' }] });
  });

  it('holds a note whose incident is not known yet, and joins it on the incident\'s first event', () => {
    const held = pagerduty.handle(delivery(NOTE), {});
    expect(held).toMatchObject({ kind: 'held', deliveryId: '01EV-NOTE', object: 'incident-PGR0VU2', item: { id: 'PNOTE1' }, reason: expect.stringContaining('held until incident PGR0VU2') });
    if (held.kind !== 'held') throw new Error('expected held');
    const recalled: Recollection = { facts: new Map(), held: new Map([['incident-PGR0VU2', [held.item]]]) };
    const joined = pagerduty.handle(delivery(RESOLVED), {}, recalled);
    expect(joined).toMatchObject({
      kind: 'writes', learn: [{ id: 'incident-PGR0VU2', data: { entity_path: 'incidents/pagerduty/Checkout API' } }],
      release: { object: 'incident-PGR0VU2', ids: ['PNOTE1'] },
    });
    if (joined.kind !== 'writes') throw new Error('expected writes');
    expect(joined.writes[0]?.update?.(null)).toMatchObject({ status: 'resolved', resolution_note: 'Root cause: pool exhausted; raised the limit to 200.' });
    // Once known, incident events learn nothing new.
    expect(pagerduty.handle(delivery(ACKED), {}, KNOWN)).toMatchObject({ kind: 'writes', learn: [] });
  });

  it('records responders and priority with each event of the timeline', () => {
    const timeline = fields(fold([TRIGGERED, ESCALATED])).timeline as Array<Record<string, unknown>>;
    expect(timeline.at(-1)).toMatchObject({ event_type: 'incident.escalated', assignees: ['Lee Senior'], priority: 'P0' });
  });
});

describe('PagerDuty connector: what it ignores and refuses', () => {
  it('answers pagey.ping without writing', () => {
    const ping = JSON.stringify({ event: { id: '01FKZOXA868SHYEE4DVNWB5P9W', event_type: 'pagey.ping', resource_type: 'pagey', occurred_at: '2025-04-07T03:00:55.532Z', agent: { id: 'PVE0ZR9', type: 'user_reference' }, client: null, data: { message: 'Hello from your friend Pagey!', type: 'ping' } } });
    expect(handle(ping)).toEqual({ kind: 'reply', body: { accepted: true, entries: [], duplicate: false, ping: true }, why: expect.stringContaining('pagey.ping') });
  });

  it('acknowledges events that are not incident lifecycle changes, with a reason', () => {
    const responder = JSON.stringify({ event: { id: 'EV-RESP', event_type: 'incident.responder.added', resource_type: 'incident', occurred_at: '2026-11-21T09:20:00Z', data: { incident: { id: 'PGR0VU2', type: 'incident_reference' }, user: { id: 'PX', type: 'user_reference' }, type: 'incident_responder' } } });
    expect(handle(responder)).toMatchObject({ kind: 'ignored', deliveryId: 'EV-RESP', reason: expect.stringMatching(/incident_responder/) });
    const service = JSON.stringify({ event: { id: 'EV-SVC', event_type: 'service.updated', resource_type: 'service', occurred_at: '2026-11-21T09:20:00Z', agent: null, data: { id: 'PF9KMXH', summary: 'Checkout API', type: 'service' } } });
    const odd = JSON.stringify({ event: { id: 'EV-ODD', event_type: 'incident.\u0000../x', occurred_at: '2026-11-21T09:20:00Z', data: { type: 'incident' } } });
    expect(handle(service)).toMatchObject({ kind: 'ignored', deliveryId: 'EV-SVC', reason: expect.stringMatching(/service\.updated/) });
    expect(handle(odd)).toMatchObject({ kind: 'ignored', deliveryId: 'EV-ODD' });
  });

  it('refuses malformed deliveries with BAD_REQUEST or VALIDATION_FAILED, never a TypeError', () => {
    const base = JSON.parse(TRIGGERED) as { event: Record<string, unknown> & { data: Record<string, unknown> } };
    const variant = (edit: (e: typeof base.event) => void): string => {
      const copy = structuredClone(base);
      edit(copy.event);
      return JSON.stringify(copy);
    };
    const cases: Array<[string, string]> = [
      ['', 'BAD_REQUEST'], ['{', 'BAD_REQUEST'], ['\u00ff\u00fe', 'BAD_REQUEST'],
      ['null', 'BAD_REQUEST'], ['[]', 'BAD_REQUEST'], ['"event"', 'BAD_REQUEST'], ['{}', 'VALIDATION_FAILED'],
      ['{"event":null}', 'VALIDATION_FAILED'], ['{"event":[]}', 'VALIDATION_FAILED'], ['{"event":{"id":1}}', 'VALIDATION_FAILED'],
      [variant((e) => { delete e.id; }), 'VALIDATION_FAILED'],
      [variant((e) => { e.occurred_at = 'yesterday'; }), 'VALIDATION_FAILED'],
      [variant((e) => { Object.assign(e, { data: 'incident' }); }), 'VALIDATION_FAILED'],
      [variant((e) => { delete e.data.service; }), 'VALIDATION_FAILED'],
      [variant((e) => { e.data.service = { summary: '' }; }), 'VALIDATION_FAILED'],
      [variant((e) => { e.data.id = '../../PGR0VU2'; }), 'VALIDATION_FAILED'],
      [variant((e) => { e.data.id = 'P\u0000'; }), 'VALIDATION_FAILED'],
      [variant((e) => { e.data.title = 42; }), 'VALIDATION_FAILED'],
      [variant((e) => { e.data.assignees = 'Dana'; }), 'VALIDATION_FAILED'],
      [variant((e) => { e.data.number = '2'; }), 'VALIDATION_FAILED'],
    ];
    for (const [body, code] of cases) expect(serviceErrorOf(() => handle(body)).code, body.slice(0, 80)).toBe(code);
  });

  it('turns hostile service names and ids into valid entity paths and keys', () => {
    const names = ['../../etc/passwd', '..', '.', '/', '   ', 'a\u0000b\u001b[31mred\u007f', 'line\u2028sep\ufeff', 'Zahlungsdienst für Übergrößen 😀'.repeat(12), '😀'.repeat(300), `${'x'.repeat(127)} tail`, '\ud83d lone surrogate'];
    for (const name of names) {
      const write = writeOf(incidentEvent('EV-H', 'incident.triggered', '2026-11-21T09:00:00Z', { service: { id: 'PF9', summary: name } }));
      expect(entityPathProblem(write.entity_path), JSON.stringify(name)).toBeNull();
      expect(write.entity_path.startsWith('incidents/pagerduty/')).toBe(true);
      expect(write.entity_path.split('/')).toHaveLength(3);
      expect(keyProblem(write.key)).toBeNull();
    }
  });
});

describe('PagerDuty connector: an incident larger than an entry', () => {
  const start = Date.parse('2026-11-21T09:40:00Z');
  const noteAt = (i: number): string => new Date(start + i * 60_000).toISOString();
  const size = (value: EntryValue | null): number => Buffer.byteLength(JSON.stringify(value), 'utf8');
  /** Apply a note delivery to a known incident, as the store does. */
  const addNote = (current: EntryValue | null, body: string): EntryValue => {
    const outcome = pagerduty.handle(delivery(body), {}, KNOWN);
    if (outcome.kind !== 'writes') throw new Error(JSON.stringify(outcome));
    return (outcome.writes[0] as MappedWrite).update?.(current) as EntryValue;
  };
  const notesOf = (value: EntryValue | null) => fields(value).notes as Array<{ id: string; content: string; content_truncated?: true; content_chars?: number }>;

  it('lets the resolution land after ten 60 kB notes, cutting the older notes\' texts', () => {
    // The probe: notes 9 and 10 and then the resolution were refused 413 on every retry.
    let value = fold([TRIGGERED]);
    for (let i = 1; i <= 10; i++) {
      value = addNote(value, annotated(`EV-N${i}`, `PN${i}`, noteAt(i), `${i} `.padEnd(60_000, 'log line: connection pool exhausted; ')));
      expect(size(value), `note ${i}`).toBeLessThanOrEqual(LIMITS.valueBytes);
    }
    const resolved = incidentEvent('01EV-RES-LATE', 'incident.resolved', noteAt(11), { status: 'resolved' });
    value = fold([resolved], value);
    expect(size(value)).toBeLessThanOrEqual(LIMITS.valueBytes);
    expect(value).toMatchObject({ status: 'resolved', resolved_at: noteAt(11) });
    const notes = notesOf(value);
    // Every note is listed; the newest whole, the older cut to their start (each is whole in its own entry).
    expect(notes.map((n) => n.id)).toEqual(Array.from({ length: 10 }, (_, i) => `PN${i + 1}`));
    expect(notes.at(-1)?.content).toHaveLength(60_000);
    expect(notes[0]).toMatchObject({ content_truncated: true, content_chars: 60_000 });
    expect(notes[0]?.content).toHaveLength(NOTE_PREVIEW_CHARS);
    expect(fields(value).resolution_note).toHaveLength(60_000);
    expect(fields(value).notes_omitted).toBeUndefined();
    expect(notes.slice(0, -1).every((n) => n.content_truncated)).toBe(true);
    // The newest text twice (in the list and as the resolution note) and 32 KiB of the others.
    expect(size(value)).toBeLessThan(2 * 60_000 + NOTE_TEXT_BYTES);
    // Still idempotent: the same note or event again changes nothing.
    expect(addNote(value, annotated('EV-N1', 'PN1', noteAt(1), 'x'))).toEqual(value);
    expect(fold([resolved], value)).toEqual(value);
  });

  it('keeps 500 notes of 65,536 escaped characters and a crowded timeline within an entry, counting what it leaves out', () => {
    // Characters JSON writes as \u00XX: six bytes each, the most a note can cost.
    let value = fold([TRIGGERED]);
    for (let i = 1; i <= 500; i++) value = addNote(value, annotated(`EV-B${i}`, `PB${i}`, noteAt(i), '\u0007'.repeat(65_536)));
    expect(size(value)).toBeLessThanOrEqual(LIMITS.valueBytes);
    const crowd = Array.from({ length: 200 }, (_, k) => ({ id: `PU${k}`, summary: `Responder ${k} `.padEnd(60, '.'), type: 'user_reference' }));
    for (let i = 1; i <= 60; i++) {
      value = fold([incidentEvent(`EV-E${i}`, 'incident.escalated', noteAt(500 + i), { status: 'acknowledged', assignees: crowd })], value);
      expect(size(value), `event ${i}`).toBeLessThanOrEqual(LIMITS.valueBytes);
    }
    value = fold([incidentEvent('EV-RES-B', 'incident.resolved', noteAt(600), { status: 'resolved' })], value);
    expect(size(value)).toBeLessThanOrEqual(LIMITS.valueBytes);
    const v = fields(value);
    expect(v).toMatchObject({ status: 'resolved', resolved_at: noteAt(600), triggered_at: '2026-11-21T09:00:00.000Z' });
    expect(v.resolution_note).toBe('\u0007'.repeat(65_536));
    const timeline = v.timeline as Array<{ id: string }>;
    expect(timeline.at(-1)?.id).toBe('EV-RES-B');
    expect((v.timeline_omitted as number) + timeline.length).toBe(62);
    expect((v.notes_omitted as number) + notesOf(value).length).toBe(500);
    // A note it left out, delivered again, is not counted twice.
    expect(addNote(value, annotated('EV-B1', 'PB1', noteAt(1), 'again'))).toEqual(value);
  });
});

/** Deliveries on one known incident as the store applies them: the incident's entry and each note's own. */
class Store {
  incident: EntryValue | null = null;
  readonly notes = new Map<string, EntryValue>();
  versions = 0;
  bytesWritten = 0;
  deliver(body: string, recalled: Recollection = KNOWN): void {
    const outcome = pagerduty.handle(delivery(body), {}, recalled);
    if (outcome.kind !== 'writes') throw new Error(JSON.stringify(outcome));
    for (const write of outcome.writes) {
      const own = write.key.startsWith('note-');
      const current = own ? (this.notes.get(write.key) ?? null) : this.incident;
      const next = write.update?.(current) ?? null;
      if (JSON.stringify(next) === JSON.stringify(current)) continue;
      if (own) this.notes.set(write.key, next as EntryValue);
      else this.incident = next;
      this.versions += 1;
      this.bytesWritten += Buffer.byteLength(JSON.stringify(next));
    }
  }
}

describe('PagerDuty connector: a long incident stays small, each note whole in its own entry', () => {
  const start = Date.parse('2026-11-21T09:01:00Z');
  const at = (i: number): string => new Date(start + i * 1000).toISOString();
  const size = (value: unknown): number => Buffer.byteLength(JSON.stringify(value), 'utf8');
  /** A note of 300–2,000 characters, different for every i (as the review's probe sends). */
  const text = (i: number): string => `note ${i}: `.padEnd(300 + ((i * 7919) % 1700), `replica lag ${i} exceeded the threshold; `);
  const noteBody = (i: number) => annotated(`EV-N${i}`, `PN${i}`, at(i), text(i));
  const eventBody = (i: number) => incidentEvent(`EV-E${i}`, i % 8 === 0 ? 'incident.reassigned' : 'incident.escalated', at(i), { status: 'acknowledged' });

  it('lists the newest 50 notes and 100 timeline entries of 2,000 events within ~50 kB, counting the rest exactly', () => {
    const store = new Store();
    store.deliver(TRIGGERED, NOTHING);
    let notes = 0;
    let events = 1;
    let largest = 0;
    for (let i = 1; i < 2000; i++) {
      if (i % 4 === 0) { store.deliver(eventBody(i)); events += 1; } else { store.deliver(noteBody(i)); notes += 1; }
      largest = Math.max(largest, size(store.incident));
    }
    const v = fields(store.incident);
    // Before: ~520 kB per version once full (value-budget.ts's 512 KiB was the only bound).
    expect(largest).toBeLessThan(64 * 1024);
    const listed = v.notes as Array<{ id: string; content: string; content_truncated?: true; content_chars?: number }>;
    expect(listed).toHaveLength(INCIDENT_NOTES);
    expect(v.notes_omitted).toBe(notes - INCIDENT_NOTES);
    expect(v.timeline as unknown[]).toHaveLength(INCIDENT_TIMELINE);
    expect(v.timeline_omitted).toBe(events - INCIDENT_TIMELINE);
    // The newest texts kept whole within 32 KiB (the newest always), the older cut to their start.
    const whole = listed.filter((n) => !n.content_truncated);
    expect(whole.at(-1)?.id).toBe('PN1999');
    expect(listed.slice(listed.length - whole.length)).toEqual(whole);
    expect(size(whole.slice(0, -1).map((n) => n.content))).toBeLessThanOrEqual(NOTE_TEXT_BYTES);
    for (const n of listed.filter((x) => x.content_truncated)) expect(n.content_chars).toBe(text(Number(n.id.slice(2))).length);
    // Every note is whole in its own entry, listed or not.
    expect(store.notes.size).toBe(notes);
    for (let i = 1; i < 2000; i++) {
      if (i % 4 === 0) continue;
      expect(store.notes.get(`note-PN${i}`), `note ${i}`).toEqual({ id: `PN${i}`, incident_id: 'PGR0VU2', incident_key: 'incident-PGR0VU2', at: at(i), by: 'Dana Ops', content: text(i) });
    }
    // The resolution lands and names the newest note.
    store.deliver(incidentEvent('EV-RES', 'incident.resolved', at(2000), { status: 'resolved' }));
    expect(fields(store.incident)).toMatchObject({ status: 'resolved', resolution_note: text(1999), resolved_at: at(2000), timeline_omitted: events + 1 - INCIDENT_TIMELINE });
  });

  it('is indexed by the Cortex with every note counted and the newest quoted', () => {
    const store = new Store();
    store.deliver(TRIGGERED, NOTHING);
    for (let i = 1; i <= 120; i++) store.deliver(noteBody(i));
    const entries = [
      { entity_path: 'incidents/pagerduty/Checkout API', key: 'incident-PGR0VU2', version: 121, value: store.incident },
      ...[...store.notes].map(([key, value]) => ({ entity_path: 'incidents/pagerduty/Checkout API', key, version: 1, value })),
    ] as unknown as Entry[];
    const { facts } = INCIDENTS.compile(entries, { now: Date.parse('2026-11-22T00:00:00Z') } as never) as unknown as { facts: { counts: { total: number }; incidents: Array<Record<string, unknown>> } };
    expect(facts.counts.total).toBe(1);
    expect(facts.incidents[0]).toMatchObject({ key: 'incident-PGR0VU2', notes: 120, last_note: { at: at(120), by: 'Dana Ops', content: text(120).slice(0, 500) } });
  });

  it('makes no version for a note or event delivered again, listed or let go', () => {
    const store = new Store();
    store.deliver(TRIGGERED, NOTHING);
    for (let i = 1; i <= 300; i++) store.deliver(i % 4 === 0 ? eventBody(i) : noteBody(i));
    const [incident, notes, versions] = [store.incident, new Map(store.notes), store.versions];
    // The same notes and events under new delivery ids (after the dedup window): the newest, and ones the lists let go.
    for (const i of [299, 298, 1, 2, 3, 4, 8, 296]) {
      store.deliver(i % 4 === 0 ? eventBody(i) : annotated(`EV-AGAIN-${i}`, `PN${i}`, at(i), text(i)));
    }
    expect(store.incident).toEqual(incident);
    expect(store.notes).toEqual(notes);
    expect(store.versions).toBe(versions);
  });

  it('writes each held note\'s own entry when the incident\'s first event joins it', () => {
    const held = pagerduty.handle(delivery(noteBody(1)), {});
    if (held.kind !== 'held') throw new Error('expected held');
    const joined = pagerduty.handle(delivery(TRIGGERED), {}, { facts: new Map(), held: new Map([['incident-PGR0VU2', [held.item]]]) });
    if (joined.kind !== 'writes') throw new Error('expected writes');
    expect(joined.writes.map((w) => [w.entity_path, w.key])).toEqual([['incidents/pagerduty/Checkout API', 'incident-PGR0VU2'], ['incidents/pagerduty/Checkout API', 'note-PN1']]);
    expect(joined.writes[1]?.update?.(null)).toMatchObject({ id: 'PN1', content: text(1) });
  });

  it('keys a note PagerDuty gave no id by a digest of its event id, a valid key', () => {
    const body = JSON.parse(annotated('évènement / 1 \u2028'.repeat(20), 'X', at(1), 'no id')) as { event: { data: Record<string, unknown> } };
    delete body.event.data.id;
    const outcome = pagerduty.handle(delivery(JSON.stringify(body)), {}, KNOWN);
    if (outcome.kind !== 'writes') throw new Error(JSON.stringify(outcome));
    const key = outcome.writes[1]?.key ?? '';
    expect(key).toMatch(/^note-sha256-[0-9a-f]{32}$/);
    expect(keyProblem(key)).toBeNull();
  });

  it('shrinks an incident stored larger by an earlier release on its next event, counting what it lets go', () => {
    // 500 notes and 500 timeline entries, as the value-limit bound let an incident grow.
    const notes = Array.from({ length: 500 }, (_, i) => ({ id: `PN${i}`, at: at(i), by: 'Dana Ops', content: text(i) }));
    const timeline = Array.from({ length: 500 }, (_, i) => ({ id: `EV-OLD${String(i).padStart(3, '0')}`, event_type: 'incident.escalated', status: 'acknowledged', at: at(i), by: 'Tenex Engineer', assignees: ['Dana Ops'], priority: 'P1' }));
    const stored = { ...fields(fold([TRIGGERED])), timeline, timeline_omitted: 7, notes_omitted: 3, notes, resolution_note: null };
    const next = fields(fold([eventBody(900)], stored));
    expect(size(next)).toBeLessThan(64 * 1024);
    expect(next.timeline as unknown[]).toHaveLength(INCIDENT_TIMELINE);
    expect(next.timeline_omitted).toBe(7 + 501 - INCIDENT_TIMELINE);
    expect(next.notes as unknown[]).toHaveLength(INCIDENT_NOTES);
    expect(next.notes_omitted).toBe(3 + 500 - INCIDENT_NOTES);
  });
});
