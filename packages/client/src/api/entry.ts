/**
 * The memory entry as stored and returned (SPEC §3). One object per version: the current
 * entry is simply its newest version.
 *
 * Declared here, in the client, because it is part of the HTTP API; the server imports it
 * from `cairn-memory-client`, so what it sends and what clients read cannot drift apart.
 */

/** The content: a plain string, or a JSON object (the server refuses arrays and bare numbers). */
export type EntryValue = string | { [key: string]: unknown };

/**
 * How recorded outcomes judge an entry (see `evidence` below): `untested` (no outcome yet),
 * `validated`, `contested` (mixed or too little), `discredited` (acting on it kept failing).
 */
export type EvidenceStatus = 'untested' | 'validated' | 'contested' | 'discredited';

/** Outcomes recorded against an entry's current content (a new value starts again at zero). */
export interface EntryEvidence {
  successes: number;
  failures: number;
  status: EvidenceStatus;
}

/**
 * A named relation from one entry to another in the same namespace: `caused_by`, `supersedes`,
 * `see_also`, or the writer's own label.
 */
export interface EntryLink {
  entity_path: string;
  key: string;
  relation: string;
}

export interface Entry {
  namespace: string;
  entity_path: string;
  key: string;
  value: EntryValue;
  version: number;
  confidence: number;
  agent_id: string;
  event_type: string | null;
  memory_type: string;
  shared: boolean;
  tags: string[];
  provenance: Record<string, unknown>;
  content_hash: string;
  /** When the entry's first version was written. */
  created_at: string;
  /** When this version was written. */
  written_at: string;
  expires_at: string | null;
  deleted: boolean;
  /** What recorded outcomes say about this content (`POST /api/v1/outcomes`). */
  evidence: EntryEvidence;
  /** Related entries this version names (see `/api/v1/neighbours`). */
  links: EntryLink[];
}

/** One entry's part of a batch write: its version now, and whether this batch stored nothing for it. */
export interface BatchItemResult {
  entry: Entry;
  /** True when this item was identical to the entry's current version and stored nothing. */
  unchanged: boolean;
}

/** What a batch write did: one result per entry, in the request's order. Every version was stored, or the request failed and none was. */
export interface BatchResult {
  results: BatchItemResult[];
}
