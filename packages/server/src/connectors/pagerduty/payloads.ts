import { z } from 'zod';

/**
 * The parts of PagerDuty v3 webhook payloads Cairn reads (developer.pagerduty.com, "Webhooks
 * v3 Overview"): one `event` per delivery, whose `data` shape depends on `event_type` —
 * an `incident` for lifecycle events, an `incident_note` / `incident_responder` /
 * `incident_status_update` (which only reference the incident) for the others.
 */

/** Provider ids end up in entry keys: keep them to the characters PagerDuty uses. */
const Id = z.string().regex(/^[A-Za-z0-9_.:-]{1,128}$/, 'must be a PagerDuty id');

/** `occurred_at` orders out-of-order deliveries, so it must be a real instant. */
const Instant = z.string().max(64).refine((s) => !Number.isNaN(Date.parse(s)), 'must be an ISO 8601 time');

/** Most PagerDuty objects arrive as references: `{id, type, summary, html_url, self}`. */
const Reference = z.object({ id: z.string().nullish(), summary: z.string().nullish(), html_url: z.string().nullish() });

export const Envelope = z.object({
  event: z.object({
    id: z.string().min(1).max(512),
    event_type: z.string().min(1).max(128),
    resource_type: z.string().nullish(),
    occurred_at: Instant,
    agent: Reference.nullish(),
    // Checked per event type below: a ping's data is `{message, type: "ping"}`.
    data: z.record(z.string(), z.unknown()).nullish(),
  }),
});
export type Envelope = z.output<typeof Envelope>;

export const Incident = z.object({
  id: Id,
  type: z.literal('incident'),
  number: z.number().int().nullish(),
  title: z.string().max(4096),
  status: z.string().min(1).max(64),
  urgency: z.string().max(64).nullish(),
  html_url: z.string().max(2048).nullish(),
  incident_key: z.string().max(1024).nullish(),
  created_at: Instant.nullish(),
  // The service names the entity path, so an incident without one cannot be placed.
  service: z.object({ id: z.string().nullish(), summary: z.string().min(1).max(1024) }),
  assignees: z.array(Reference).max(1000).nullish(),
  escalation_policy: Reference.nullish(),
  teams: z.array(Reference).max(1000).nullish(),
  priority: Reference.nullish(),
  conference_bridge: z.object({ conference_url: z.string().nullish(), conference_number: z.string().nullish() }).nullish(),
  // Today only `merge_resolve_reason`, naming the incident this one was merged into.
  resolve_reason: z.object({ type: z.string(), incident: Reference.nullish() }).nullish(),
});
export type Incident = z.output<typeof Incident>;

/**
 * `incident.annotated`: the note a responder left (often the resolution). It names its
 * incident by reference only, so the connector files it where that incident's entry lives.
 */
export const MAX_NOTE_CHARS = 65536;
export const Note = z.object({
  id: Id.nullish(),
  type: z.literal('incident_note'),
  content: z.string().max(MAX_NOTE_CHARS),
  incident: z.object({ id: Id, summary: z.string().nullish(), html_url: z.string().nullish() }),
});
export type Note = z.output<typeof Note>;
