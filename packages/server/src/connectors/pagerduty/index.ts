import { z } from 'zod';
import { parseInput } from '../../domain/parse-input.ts';
import type { Connector, Delivery, Outcome } from '../connector.ts';
import { parseJsonBody, objectOr, peekJson, stringOr } from '../parse-json.ts';
import { incidentWrite } from './incident.ts';
import { Envelope, Incident } from './payloads.ts';
import { verifyPagerDutySignature } from './signature.ts';

/** Incident event types are dotted lower-case words; anything else is not PagerDuty's. */
const INCIDENT_EVENT = /^incident\.[a-z0-9_]+(\.[a-z0-9_]+)*$/;

const IncidentEvent = z.object({ event: z.object({ data: Incident }) });

/**
 * PagerDuty Generic Webhooks v3: every incident event whose data is the incident itself
 * (triggered, acknowledged, unacknowledged, reassigned, escalated, delegated,
 * priority_updated, reopened, resolved, and types PagerDuty adds later) is folded into one
 * entry per incident, `incidents/pagerduty/<service>` / `incident-<id>`, whose versions are
 * its lifecycle.
 */
export const pagerduty: Connector = {
  name: 'pagerduty',
  title: 'PagerDuty',
  hint: 'Integrations → Generic Webhooks (v3) → New Webhook: paste the URL as Webhook URL, add the API key as custom header X-Cairn-API-Key when keys are on, and pick the incident events. PagerDuty generates the signing secret itself: give it to Cairn when enabling (signing_secret) or as CAIRN_CONNECTOR_PAGERDUTY_SECRET.',
  sendsHeaders: true,
  issuesOwnSecret: true,

  verify: (delivery: Delivery, secret: string) =>
    verifyPagerDutySignature(delivery.headers['x-pagerduty-signature'], secret, delivery.body),

  peek: (delivery: Delivery) => {
    const event = objectOr(peekJson(delivery.body)?.event);
    return { event: stringOr(event?.event_type), deliveryId: stringOr(event?.id) };
  },

  handle(delivery: Delivery): Outcome {
    const { event } = parseJsonBody(delivery.body, Envelope);
    const type = event.event_type;
    // "Send test event" in PagerDuty's UI: prove the URL and secret work, store nothing.
    if (type === 'pagey.ping') return { kind: 'reply', body: { accepted: true, entries: [], duplicate: false, ping: true }, why: 'test event (pagey.ping): answered, nothing stored' };
    if (!INCIDENT_EVENT.test(type)) return { kind: 'ignored', deliveryId: event.id, reason: `PagerDuty event ${printable(type)} is not captured` };
    // incident.annotated, incident.responder.*, incident.status_update_published carry a
    // note / responder / status update that names the incident but not its service, so
    // the incident's entry cannot be found from the payload alone.
    const dataType = typeof event.data?.type === 'string' ? event.data.type : 'missing';
    if (dataType !== 'incident') {
      return { kind: 'ignored', deliveryId: event.id, reason: `PagerDuty ${type} carries ${printable(dataType)} data, not the incident, and names no service to file it under` };
    }
    const { data } = parseInput(IncidentEvent, { event }).event;
    return { kind: 'writes', deliveryId: event.id, writes: [incidentWrite(event, data)] };
  },
};

/** Event names from the payload go into reasons: keep them short and printable. */
const printable = (s: string): string => JSON.stringify(s.slice(0, 64));
