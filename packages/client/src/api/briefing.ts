import type { CortexState } from './cortex-status.ts';
import type { EvidenceStatus } from './entry.ts';
import type { ConfidenceDrop, Digest, OpenItem, RecentChange } from './digest.ts';
import type { Pattern } from './patterns.ts';
import type { Trace } from './traces.ts';

/**
 * What `/api/v1/briefing` answers (SPEC §5): what an agent should know now about a scope,
 * sized for a prompt. The server's briefing service is declared to return `Briefing`, so
 * the compiler checks that it builds exactly this. Its parts are picked from the full
 * shapes rather than restated, so a renamed field shows up in both.
 */

/** A digest cut to what a prompt needs; `facts` is the first thing dropped to fit `max_chars`. */
export type BriefingDigest = Pick<Digest, 'scope' | 'type' | 'version' | 'compiled_at' | 'headline'> & {
  facts?: Record<string, unknown>;
};

/** A pattern without its evidence (read `/api/v1/patterns` for that). */
export type BriefingPattern = Pick<Pattern, 'id' | 'kind' | 'entity_path' | 'title' | 'detail' | 'detected_at'>;

export type BriefingTrace = Pick<Trace, 'id' | 'title' | 'reason' | 'chain' | 'detected_at'>;

/** An entry recorded outcomes call into question: contested (mixed results) or discredited (kept failing). */
export interface JudgedEntry {
  entity_path: string;
  key: string;
  version: number;
  status: Extract<EvidenceStatus, 'contested' | 'discredited'>;
  successes: number;
  failures: number;
  written_at: string;
  summary: string;
}

/** What an agent should know now: overview, digests, open items, recent changes, patterns, traces, confidence drops. */
export interface Briefing {
  namespace: string;
  /** The scope briefed on; null for the whole namespace. */
  entity_path: string | null;
  /** Who asked; their own writes are left out of `recent_changes`. */
  agent_id: string | null;
  generated_at: string;
  /**
   * The past instant asked about (`as_of`), or null for now. As of an instant, everything
   * comes from the versions current then: digests are compiled from them on demand (without
   * confidence drops), and patterns and traces are those detected by then.
   */
  as_of: string | null;
  /** `compiled`: whether the Cortex had compiled anything in this scope yet. */
  cortex: Pick<CortexState, 'status' | 'last_compiled_at' | 'lag_ms'> & { compiled: boolean };
  /** One line on the whole scope, when there is a digest to take it from. */
  overview: string | null;
  digests: BriefingDigest[];
  open_items: OpenItem[];
  recent_changes: RecentChange[];
  patterns: BriefingPattern[];
  traces: BriefingTrace[];
  confidence_drops: ConfidenceDrop[];
  /** Entries whose recorded outcomes disagree: worth checking before relying on them. */
  contested: JudgedEntry[];
  /** With `discredited: "apart"`: entries acting on which kept failing (tried and failed). */
  tried_and_failed?: JudgedEntry[];
  /** Whether anything was left out to fit `max_chars`. */
  truncated: boolean;
  /** Length of this answer as JSON, in characters. */
  size_chars: number;
}
