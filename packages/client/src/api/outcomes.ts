import type { EntryEvidence } from './entry.ts';

/**
 * What `/api/v1/outcomes` answers per entry (SPEC §5): how an outcome moved its confidence.
 * The server's outcome service returns this type.
 */

export interface OutcomeResult {
  entity_path: string;
  key: string;
  /** `stale`: the entry changed since the agent read `version`, so the outcome says nothing about it now. */
  status: 'updated' | 'stale';
  version: number;
  previous_confidence: number;
  confidence: number;
  /** The entry's evidence after this outcome (absent when `stale`: nothing was counted). */
  evidence?: EntryEvidence;
}
