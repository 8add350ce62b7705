/**
 * Decision traces (`/api/v1/traces`, SPEC §8): causal chains of entries the Cortex linked by
 * rule, each with the rule's reason. The server stores and answers this type as it is.
 */

export interface TraceLink {
  step: number;
  role: 'cause' | 'effect' | 'fix' | 'resolution';
  entity_path: string;
  key: string;
  version: number;
  event: string;
  at: string | null;
  summary: string;
}

/** A decision trace: entries linked by a rule, with the rule's reason spelled out. */
export interface Trace {
  id: string;
  /** A failed deploy followed by an incident; failing CI on the default branch followed by a failed deploy or an incident. */
  kind: 'failed_deploy_then_incident' | 'failed_ci_then_failure';
  namespace: string;
  service: string;
  title: string;
  reason: string;
  chain: TraceLink[];
  window_ms: number;
  detected_at: string;
}
