import { z } from 'zod';
import { parseInput } from '../../domain/parse-input.ts';
import type { Connector, Delivery, Outcome, Recollection, Wants } from '../connector.ts';
import { NOTHING_RECALLED } from '../connector.ts';
import { notAfterReceipt } from '../lifecycle.ts';
import { objectOr, parseJsonBody, peekJson, stringOr } from '../parse-json.ts';
import { incidentWrites } from './incident.ts';
import { applyNotes, isNote, noteOf, noteWrite } from './notes.ts';
import { Envelope, Incident, Note } from './payloads.ts';
import { verifyPagerDutySignature } from './signature.ts';

/** Incident event types are dotted lower-case words; anything else is not PagerDuty's. */
const INCIDENT_EVENT = /^incident\.[a-z0-9_]+(\.[a-z0-9_]+)*$/;
/** Incident ids name records of what the connector learned: only PagerDuty's id characters. */
const INCIDENT_ID = /^[A-Za-z0-9_.:-]{1,128}$/;

const IncidentEvent = z.object({ event: z.object({ data: Incident }) });
const NoteEvent = z.object({ event: z.object({ data: Note }) });

/** Where an incident's entry is, once an incident event has been stored. */
const objectOf = (incidentId: string): string => `incident-${incidentId}`;

/**
 * PagerDuty Generic Webhooks v3: every incident event whose data is the incident itself
 * (triggered, acknowledged, unacknowledged, reassigned, escalated, delegated,
 * priority_updated, reopened, resolved, and types PagerDuty adds later) is folded into one
 * entry per incident, `incidents/pagerduty/<service>` / `incident-<id>`, whose versions are
 * its lifecycle. `incident.annotated` adds its note to that entry; the note names no service,
 * so the connector remembers where each incident lives, and holds a note that arrives
 * before anything else about its incident until the incident's first event joins it. Each
 * note is also whole in its own entry beside the incident's, `note-<id>`: the incident's entry
 * lists the newest notes and timeline entries only (budget.ts).
 */
export const pagerduty: Connector = {
  name: 'pagerduty',
  title: 'PagerDuty',
  hint: 'Integrations → Generic Webhooks (v3) → New Webhook: paste the URL as Webhook URL, add the API key as custom header X-Cairn-API-Key when keys are on, and pick the incident events (annotated too, for resolution notes). PagerDuty generates the signing secret itself: give it to Cairn when enabling (signing_secret) or as CAIRN_CONNECTOR_PAGERDUTY_SECRET.',
  sendsHeaders: true,
  issuesOwnSecret: true,

  verify: (delivery: Delivery, secret: string) =>
    verifyPagerDutySignature(delivery.headers['x-pagerduty-signature'], secret, delivery.body),

  peek: (delivery: Delivery) => {
    const event = objectOr(peekJson(delivery.body)?.event);
    return { event: stringOr(event?.event_type), deliveryId: stringOr(event?.id) };
  },

  wants: (delivery: Delivery): Wants => {
    const data = objectOr(objectOr(peekJson(delivery.body)?.event)?.data);
    const isIncident = data?.type === 'incident';
    const id = isIncident ? stringOr(data.id) : stringOr(objectOr(data?.incident)?.id);
    if (id === null || !INCIDENT_ID.test(id)) return { facts: [], held: [] };
    return { facts: [objectOf(id)], held: isIncident ? [objectOf(id)] : [] };
  },

  handle(delivery: Delivery, _settings, recalled: Recollection = NOTHING_RECALLED): Outcome {
    const { event } = parseJsonBody(delivery.body, Envelope);
    const type = event.event_type;
    // "Send test event" in PagerDuty's UI: prove the URL and secret work, store nothing.
    if (type === 'pagey.ping') return { kind: 'reply', body: { accepted: true, entries: [], duplicate: false, ping: true }, why: 'test event (pagey.ping): answered, nothing stored' };
    if (!INCIDENT_EVENT.test(type)) return { kind: 'ignored', deliveryId: event.id, reason: `PagerDuty event ${printable(type)} is not captured` };
    const dataType = typeof event.data?.type === 'string' ? event.data.type : 'missing';
    if (dataType === 'incident_note') return noteOutcome(event, recalled);
    // incident.responder.*, incident.status_update_published carry a responder request or a
    // status update: not captured (the incident's own events carry its responders).
    if (dataType !== 'incident') {
      return { kind: 'ignored', deliveryId: event.id, reason: `PagerDuty ${type} carries ${printable(dataType)} data, which is not captured` };
    }
    const { data } = parseInput(IncidentEvent, { event }).event;
    const object = objectOf(data.id);
    const held = (recalled.held.get(object) ?? []).filter((h) => isNote(h.data));
    // occurred_at orders the incident's events: bounded by the receipt time (notAfterReceipt).
    const writes = incidentWrites({ ...event, occurred_at: notAfterReceipt(event.occurred_at, delivery.now) }, data, held.map((h) => h.data).filter(isNote));
    const write = writes[0]!;
    const known = recalled.facts.get(object)?.entity_path === write.entity_path;
    return {
      kind: 'writes', deliveryId: event.id, writes,
      learn: known ? [] : [{ id: object, data: { entity_path: write.entity_path } }],
      ...(held.length > 0 ? { release: { object, ids: held.map((h) => h.id) } } : {}),
    };
  },
};

/** An annotation: onto its incident's entry when the incident is known, else held for it. */
const noteOutcome = (event: Envelope['event'], recalled: Recollection): Outcome => {
  const { data } = parseInput(NoteEvent, { event }).event;
  const note = noteOf(event, data);
  const object = objectOf(data.incident.id);
  const path = recalled.facts.get(object)?.entity_path;
  if (typeof path !== 'string') {
    return { kind: 'held', deliveryId: event.id, object, item: note, reason: `note held until incident ${data.incident.id} is known (a note names no service)` };
  }
  return {
    kind: 'writes', deliveryId: event.id,
    writes: [
      { entity_path: path, key: object, event_type: 'incident.annotated', confidence: 1, update: (current) => applyNotes(current, [note.data]) },
      noteWrite(path, data.incident.id, note.data),
    ],
  };
};

/** Event names from the payload go into reasons: keep them short and printable. */
const printable = (s: string): string => JSON.stringify(s.slice(0, 64));
