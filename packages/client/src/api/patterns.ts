/**
 * Patterns (`/api/v1/patterns`, SPEC §8): what keeps happening in one scope, found by rule
 * across the Cortex's digests. The server stores and answers this type as it is.
 */

export type PatternKind = 'recurring_incidents' | 'flapping_deploy' | 'contested_key';

/** One entry version a pattern was found in. */
export interface Evidence {
  entity_path: string;
  key: string;
  version: number;
  at: string | null;
}

/** Something that keeps happening in one scope, found by rule (no model involved). */
export interface Pattern {
  id: string;
  kind: PatternKind;
  namespace: string;
  /** The path digest it was found in. */
  scope: string;
  entity_path: string;
  title: string;
  /** Kind-specific figures (incident counts, deploy states, the contesting agents). */
  detail: Record<string, unknown>;
  evidence: Evidence[];
  detected_at: string;
}
