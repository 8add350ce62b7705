import type { EntryValue } from '../../domain/entry.ts';
import type { MappedWrite } from '../connector.ts';
import { type Fields, earliest, fieldsOf, isoOf, mergeEvent } from '../lifecycle.ts';
import { pathSegment } from '../parse-json.ts';
import { countOf, counted, fitIncident, INCIDENT_TIMELINE, isAmongOmitted, listOf } from './budget.ts';
import { type NoteFields, noteWrite, withNotes } from './notes.ts';
import type { Envelope, Incident } from './payloads.ts';

type PdEvent = Envelope['event'];

/** What the incident looks like as of one event: every incident event carries the whole incident. */
const snapshotOf = (incident: Incident): Fields => ({
  id: incident.id,
  number: incident.number ?? null,
  title: incident.title,
  status: incident.status,
  urgency: incident.urgency ?? null,
  priority: incident.priority?.summary ?? null,
  service: { id: incident.service.id ?? null, name: incident.service.summary },
  escalation_policy: incident.escalation_policy?.summary ?? null,
  assignees: (incident.assignees ?? []).map((a) => a.summary ?? a.id ?? 'unknown'),
  teams: (incident.teams ?? []).map((t) => t.summary ?? t.id ?? 'unknown'),
  html_url: incident.html_url ?? null,
  incident_key: incident.incident_key ?? null,
  conference_url: incident.conference_bridge?.conference_url ?? null,
  // PagerDuty's only resolve reason is a merge; a typed note arrives as incident.annotated.
  resolution: incident.resolve_reason
    ? { type: incident.resolve_reason.type, merged_into: incident.resolve_reason.incident?.id ?? null, merged_into_title: incident.resolve_reason.incident?.summary ?? null }
    : null,
  created_at: isoOf(incident.created_at),
});

/**
 * When the incident last became resolved: the start of the final run of timeline entries
 * whose status is "resolved". Null while it is open, so a reopened incident has no MTTR.
 */
const resolvedAt = (value: Fields, prior: Fields | null, omitted: number): string | null => {
  if (value.status !== 'resolved') return null;
  const timeline = listOf(value.timeline);
  let since: string | null = null;
  for (const entry of timeline) since = entry.status === 'resolved' ? (since ?? String(entry.at)) : null;
  // The run reaches back past the entries listed: it began when the value before said it did.
  const throughout = omitted > 0 && since !== null && since === String(timeline[0]?.at);
  if (throughout && prior?.status === 'resolved' && typeof prior.resolved_at === 'string') return earliest(prior.resolved_at, since);
  return since ?? (typeof value.last_event_at === 'string' ? value.last_event_at : null);
};

/**
 * Fold one incident event into the incident's entry. Exported for tests: applying a
 * sequence of these is exactly what the store does with successive deliveries.
 */
const applyIncidentEvent = (current: EntryValue | null, event: PdEvent, incident: Incident, notes: readonly NoteFields[]): Fields => {
  const at = isoOf(event.occurred_at) ?? event.occurred_at;
  const prior = fieldsOf(current);
  const timeline = listOf(prior?.timeline);
  const timelineOmitted = countOf(prior?.timeline_omitted);
  // Responders and priority as of each event: reassignment, escalation and priority
  // changes stay readable in the timeline after later events replace the snapshot.
  const entry = {
    id: event.id, event_type: event.event_type, status: incident.status, at, by: event.agent?.summary ?? null,
    assignees: (incident.assignees ?? []).map((a) => a.summary ?? a.id ?? 'unknown'), priority: incident.priority?.summary ?? null,
  };
  const marked = !isAmongOmitted(entry, timeline, timelineOmitted);
  const folded = mergeEvent(current, { id: event.id, at, snapshot: snapshotOf(incident), ...(marked ? { mark: { list: 'timeline', entry } } : {}) });
  // The newest INCIDENT_TIMELINE entries are listed (a timeline stored longer shrinks now): count the ones let go.
  const merged: Fields = { ...folded, timeline: listOf(folded.timeline).slice(-INCIDENT_TIMELINE) };
  const added = marked && !timeline.some((t) => t.id === event.id) ? 1 : 0;
  const letGo = timeline.length + added - listOf(merged.timeline).length;
  const acknowledged = event.event_type === 'incident.acknowledged' || incident.status === 'acknowledged';
  return fitIncident(withNotes({
    ...merged,
    // Anchors for MTTA / MTTR: first trigger, first acknowledgement, last resolution.
    triggered_at: earliest(prior?.triggered_at, merged.created_at, isoOf(incident.created_at), event.event_type === 'incident.triggered' ? at : null),
    acknowledged_at: earliest(prior?.acknowledged_at, acknowledged ? at : null),
    resolved_at: resolvedAt(merged, prior, timelineOmitted + letGo),
    // A later event's snapshot replaces the fields mergeEvent does not know as lists: carry the counts.
    ...counted('timeline_omitted', timelineOmitted + letGo),
    ...counted('notes_omitted', countOf(prior?.notes_omitted)),
  }, notes));
};

/** `notes`: annotations held because they arrived before anything else about the incident. */
const incidentWrite = (event: PdEvent, incident: Incident, notes: readonly NoteFields[] = []): MappedWrite => ({
  entity_path: `incidents/pagerduty/${pathSegment(incident.service.summary)}`,
  key: `incident-${incident.id}`,
  event_type: event.event_type,
  confidence: 1,
  update: (current) => applyIncidentEvent(current, event, incident, notes),
});

/** The incident's write, then each held note's own entry beside it. */
export const incidentWrites = (event: PdEvent, incident: Incident, notes: readonly NoteFields[] = []): MappedWrite[] => {
  const write = incidentWrite(event, incident, notes);
  return [write, ...notes.map((note) => noteWrite(write.entity_path, incident.id, note))];
};
