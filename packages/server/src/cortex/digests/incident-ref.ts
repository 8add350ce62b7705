/**
 * One incident as the incident digests index it. Beside the incidents compiler, chat digests
 * (links to open incidents), patterns, traces and the namespace state read it, so it stands
 * alone: the compile context names it without depending on any one compiler.
 */
export interface IncidentRef {
  entity_path: string;
  key: string;
  version: number;
  id: string;
  title: string;
  status: string;
  service: string;
  urgency: string | null;
  assignees: string[];
  triggered_at: string | null;
  acknowledged_at: string | null;
  resolved_at: string | null;
  /** Notes responders left (PagerDuty annotations), and the last one once it is resolved. */
  notes: number;
  last_note: { at: string; by: string | null; content: string } | null;
  resolution_note: string | null;
}

export const unresolved = (i: IncidentRef): boolean => i.status !== 'resolved';

/** What a chat digest quotes of the incident a thread names (CommsFacts' incident_threads). */
export type IncidentQuote = Pick<IncidentRef, 'entity_path' | 'key' | 'id' | 'title' | 'status'>;

export const quoteIncident = (i: IncidentQuote): IncidentQuote => ({ entity_path: i.entity_path, key: i.key, id: i.id, title: i.title, status: i.status });

/**
 * Whether a thread linked to `a` would read differently linked to `b` (either missing: not
 * open): the one comparison of incidents that decides which chat threads are compiled again.
 */
export const quotesDiffer = (a: IncidentQuote | undefined, b: IncidentQuote | undefined): boolean =>
  a === undefined || b === undefined ? a !== b : a.entity_path !== b.entity_path || a.key !== b.key || a.id !== b.id || a.title !== b.title || a.status !== b.status;
