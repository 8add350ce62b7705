import type { AuditEvent, Scope, TeamRecord } from './api/admin.ts';
import type { ConnectorView } from './api/connectors.ts';
import type { CortexStatusResult } from './api/cortex-status.ts';
import type { Digest, DigestTypeFilter } from './api/digest.ts';
import type { Entry, EntryLink, EntryValue } from './api/entry.ts';
import type { OutcomeResult } from './api/outcomes.ts';
import type { PatternKind } from './api/patterns.ts';
import type { DiscreditedMode, Highlight, SearchMode, SearchResult } from './api/search.ts';

/**
 * Requests and answers of the REST API (SPEC §5), as the client sends and receives them.
 * The shapes the server builds its answers from live in api/ (the server imports them from
 * this package); this file adds the requests and the envelopes around them.
 */

export type * from './api/admin.ts';
export type * from './api/forget.ts';
export type * from './api/briefing.ts';
export type * from './api/connectors.ts';
export type * from './api/cortex-status.ts';
export type * from './api/digest.ts';
export type * from './api/entry.ts';
export type * from './api/neighbours.ts';
export type * from './api/outcomes.ts';
export type * from './api/patterns.ts';
export type * from './api/search.ts';
export type * from './api/traces.ts';

/** One entry: its entity path and key (and namespace, when not the server's default). */
export interface EntryRef {
  entity_path: string;
  key: string;
  namespace?: string;
}

export interface WriteRequest extends EntryRef {
  value: EntryValue;
  confidence?: number;
  agent_id?: string;
  event_type?: string | null;
  memory_type?: string;
  shared?: boolean;
  tags?: string[];
  provenance?: Record<string, unknown>;
  /** Links to other entries (`relation` names how they relate), walked by `neighbours`. */
  links?: EntryLink[];
  /** Compare-and-set: write only if the entry is at this version (0 = must not exist). */
  if_version?: number;
  ttl_seconds?: number;
  /** Also answer the live entries most like this one (near duplicates): true, or a threshold and count. Off by default. */
  similar?: boolean | { min_similarity?: number; limit?: number };
}

/** A live entry much like the one written: cosine similarity of the search vectors, 0–1. */
export interface SimilarEntry {
  entry: Entry;
  similarity: number;
}

export interface WriteResponse {
  entry: Entry;
  /** True when the write was identical to the current version and stored nothing. */
  unchanged: boolean;
  /** With `similar`: the live entries most like this one, most similar first (empty when none, or no vector search here). */
  similar?: SimilarEntry[];
}

/** Up to 100 writes stored atomically: all of them or none (`POST /api/v1/entries/batch`). */
export interface WriteBatchRequest {
  /** Default namespace for entries that name none. */
  namespace?: string;
  entries: Omit<WriteRequest, 'similar'>[];
}

export interface ReadRequest extends EntryRef {
  version?: number;
  /** ISO 8601 past instant: the version current then; `NotFoundError` if the entry was not live then. Not with `version`. */
  as_of?: string;
}

export interface DeleteRequest extends EntryRef {
  if_version?: number;
}

export interface ListQuery {
  namespace?: string;
  /** Segment-wise prefix: `repos/acme` matches `repos/acme/api`, not `repos/acme-corp`. */
  entity_path?: string;
  agent_id?: string;
  /** ISO 8601 time. */
  since?: string;
  limit?: number;
  cursor?: string;
  /** ISO 8601 past instant: answer from the versions current then (not later than the server's clock). */
  as_of?: string;
}

export interface ListResponse {
  entries: Entry[];
  next_cursor: string | null;
}

export interface NeighboursRequest extends EntryRef {
  /** How many links away to walk (1–3, default 1). */
  depth?: number;
  /** Follow only links with this relation. */
  relation?: string;
  /** Most entries (1–200, default 50). */
  limit?: number;
}

export interface HistoryRequest extends EntryRef {
  limit?: number;
  before?: number;
}

export interface HistoryResponse {
  versions: Entry[];
  /** Pass as `before` to get the next older page; null at version 1. */
  next_before: number | null;
}

export interface SearchRequest {
  /** Words (any may match), "an exact phrase", or a prefix*. */
  query: string;
  namespace?: string;
  entity_path?: string;
  agent_id?: string;
  since?: string;
  min_confidence?: number;
  event_type?: string;
  /** 1–100, default 10. */
  limit?: number;
  mode?: SearchMode;
  /** Discredited entries: left out (default), included, or listed apart in `tried_and_failed`. */
  discredited?: DiscreditedMode;
  /** ISO 8601 past instant: answer from the versions current then (not later than the server's clock). */
  as_of?: string;
}

/** A result and why it ranked (`parts`) and matched (`highlights`), as the search service answers. */
export type SearchHit = SearchResult;
export type SearchHighlight = Highlight;

export interface BriefingQuery {
  namespace?: string;
  /** The area to brief on: this path and below. */
  entity_path?: string;
  /** Who asks: their own writes are left out of recent changes. */
  agent_id?: string;
  /** Most items per list (default 10). */
  limit?: number;
  /** Size cap of the whole answer, in JSON characters (default 8000). */
  max_chars?: number;
  /** Discredited entries: left out of recent changes and open items (default), included, or listed apart in `tried_and_failed`. */
  discredited?: DiscreditedMode;
  /** ISO 8601 past instant: answer from the versions current then (not later than the server's clock). */
  as_of?: string;
}

export interface DigestQuery {
  namespace?: string;
  /** An entity path prefix, a source ("github"), or a scope id ("path:…", "source:…", "namespace:…"). */
  scope?: string;
  type?: DigestTypeFilter;
  limit?: number;
  cursor?: string;
}

export interface DigestList {
  digests: Digest[];
  next_cursor: string | null;
}

export interface PatternQuery {
  namespace?: string;
  entity_path?: string;
  kind?: PatternKind;
  limit?: number;
}

export interface TraceQuery {
  namespace?: string;
  entity_path?: string;
  since?: string;
  limit?: number;
}

export type CortexStatus = CortexStatusResult;

export interface OutcomeRequest {
  namespace?: string;
  /** The entries acted on; `version` = the version that was read (a changed entry is reported stale). */
  entries: Array<{ entity_path: string; key: string; version?: number }>;
  outcome: 'success' | 'failure';
  weight?: number;
}

export interface OutcomeResponse {
  results: OutcomeResult[];
}

export interface EventRequest {
  source: string;
  entity_path: string;
  key: string;
  value: EntryValue;
  event_type: string;
  event_id?: string;
  confidence?: number;
  tags?: string[];
}

export interface EventResponse {
  status: 'created' | 'unchanged' | 'duplicate';
  /**
   * The version the event made (or, unchanged, the current one). For a duplicate, null once
   * that version is no longer stored (dropped by retention, forgotten): a replay never writes.
   */
  entry: Entry | null;
}

/** What `/api/v1/whoami` says about the calling key. */
export interface Whoami {
  /** The managed key's id, "static" for a key from CAIRN_API_KEYS, null in open mode. */
  key_id: string | null;
  scopes: Scope[];
  /** Entity-path prefixes the key is confined to; null = every path. */
  prefixes: string[] | null;
  namespace: string;
  team: string | null;
}

export interface Health {
  status: 'ok';
  version: string;
  backend: string;
  uptime_s: number;
}

export type Connector = ConnectorView & { webhook_url: string };

export interface ConnectorChange {
  name: string;
  enabled: boolean;
  /** Shown on enable and rotate only; null when enabling one already on. */
  signing_secret?: string | null;
  /** With a signing secret: the connector's `enabled_at` and `rotated_at` (as listed) while that secret is in use. */
  enabled_at?: string | null;
  rotated_at?: string | null;
  webhook_url: string;
}

export interface KeyRequest {
  name: string;
  scopes: Scope[];
  /** Confine the key to these entity-path prefixes. */
  prefixes?: string[];
  namespace?: string;
  team?: string;
}

/** A managed key as listed: never its secret. */
export interface ManagedKey {
  id: string;
  name: string;
  scopes: Scope[];
  prefixes: string[] | null;
  namespace: string;
  team: string | null;
  created_at: string;
  revoked_at: string | null;
}

/** A key as issued: `key` is in this answer only. */
export type IssuedKey = ManagedKey & { key: string };

export type Team = TeamRecord;

export interface AuditQuery {
  namespace?: string;
  /** e.g. entry.written, key.created; a trailing "." matches a family ("key."). */
  action?: string;
  key_id?: string;
  agent_id?: string;
  since?: string;
  limit?: number;
  cursor?: string;
}

export interface AuditPage {
  /** Newest first. */
  events: AuditEvent[];
  next_cursor: string | null;
}
