/**
 * The shapes the Cortex compiles and stores (as shared records, never as entries, so that
 * the Cortex's own output can never feed back into it). A digest is one scope's knowledge:
 * an entity path, a source (`external/<source>`) or a whole namespace.
 */

/** Path digests are typed by the first segment of the path (SPEC §7 connector shapes). */
export type PathType = 'incidents' | 'repos' | 'comms' | 'projects' | 'generic';
export type DigestKind = 'path' | 'source' | 'namespace';
export type DigestType = PathType | 'source' | 'namespace';

/** Something still open that an agent acting on the scope should know about. */
export interface OpenItem {
  kind: string;
  entity_path: string;
  key: string;
  title: string;
  status: string | null;
  /** When it became open (ISO), for ordering. */
  since: string | null;
  detail?: Record<string, unknown>;
}

export interface RecentChange {
  entity_path: string;
  key: string;
  version: number;
  agent_id: string;
  event_type: string | null;
  written_at: string;
  confidence: number;
  summary: string;
}

/** An entry whose newest version is trusted less than the one before it. */
export interface ConfidenceDrop {
  entity_path: string;
  key: string;
  version: number;
  from: number;
  to: number;
  at: string;
  by: string;
  reason: string;
}

/** A key that agents keep overwriting with each other's different values. */
export interface ContestedKey {
  entity_path: string;
  key: string;
  agents: string[];
  /** Versions in which one agent replaced another agent's different value. */
  overwrites: number;
  versions: number[];
  last_at: string;
}

export interface Summary {
  entries: number;
  keys: string[];
  keys_truncated: boolean;
  writers: Array<{ agent_id: string; entries: number }>;
  confidence: { min: number; max: number; mean: number; below_half: number } | null;
  last_change: { entity_path: string; key: string; version: number; agent_id: string; event_type: string | null; written_at: string } | null;
}

export interface Digest {
  /** `path:<entity_path>`, `source:external/<name>` or `namespace:<namespace>`. */
  scope: string;
  kind: DigestKind;
  type: DigestType;
  namespace: string;
  entity_path: string | null;
  /** Grows by one each time the digest's content changes. */
  version: number;
  compiled_at: string;
  /** One line, for prompts and dashboards. */
  headline: string;
  summary: Summary;
  facts: Record<string, unknown>;
  open_items: OpenItem[];
  recent_changes: RecentChange[];
  confidence_drops: ConfidenceDrop[];
  contested: ContestedKey[];
  /** Hash of everything but version and compiled_at: an unchanged digest is not rewritten. */
  content_hash: string;
}

/** What a type's compiler derives from the live entries of one path. */
export interface TypedFacts {
  facts: Record<string, unknown>;
  open_items: OpenItem[];
  headline: string;
}

/** Limits that keep one digest small enough for a prompt and a record. */
export const DIGEST_LIMITS = { keys: 50, writers: 10, openItems: 20, recent: 10, drops: 20, contested: 20, index: 200 } as const;

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;
export const WEEK_MS = 7 * DAY_MS;
