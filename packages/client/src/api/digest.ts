/**
 * The digests the Cortex compiles (SPEC §8), as `/api/v1/cortex/digests` and the briefing
 * return them. A digest is one scope's knowledge: an entity path, a source
 * (`external/<source>`) or a whole namespace.
 */

/** Path digests are typed by the first segment of the path (SPEC §7 connector shapes). */
export type PathType = 'incidents' | 'repos' | 'comms' | 'projects' | 'generic';
export type DigestKind = 'path' | 'source' | 'namespace';
export type DigestType = PathType | 'source' | 'namespace';

/**
 * What `type` may be when listing digests: a digest type, or `path` (alias `entity`) for
 * every path digest whatever its type. The server's list of accepted values is checked
 * against this union at compile time.
 */
export type DigestTypeFilter = DigestType | 'path' | 'entity';

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
  /** The ten writers with the most entries. */
  writers: Array<{ agent_id: string; entries: number }>;
  /** Every source writer (`external/<source>`) with its count, when there are more than ten writers. */
  sources?: Array<{ agent_id: string; entries: number }>;
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
