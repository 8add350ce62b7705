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
