import type { Scope } from '../domain/access.ts';
import type { Entry, EntryValue } from '../domain/entry.ts';
import type { Digest } from '../cortex/digest-types.ts';
import type { Pattern } from '../cortex/patterns.ts';
import type { Trace } from '../cortex/traces.ts';
import type { ScoreParts } from '../search/fuse.ts';
import type { Highlight } from '../search/highlights.ts';
import type { TeamRecord } from '../services/admin/team-records.ts';
import type { briefing } from '../services/briefing.ts';
import type { CortexStatusResult } from '../services/cortex-status.ts';
import type { DIGEST_TYPES } from '../services/list-digests.ts';
import type { SearchResponse, SearchResult } from '../services/search-entries.ts';
import type { ConnectorView } from '../services/list-connectors.ts';
import type { OutcomeResult } from '../services/record-outcome.ts';

/** Requests and answers of the REST API (SPEC §5), as the client sends and receives them. */

export type { Entry, EntryValue, OutcomeResult, Scope };

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
  /** Compare-and-set: write only if the entry is at this version (0 = must not exist). */
  if_version?: number;
  ttl_seconds?: number;
}

export interface WriteResponse {
  entry: Entry;
  /** True when the write was identical to the current version and stored nothing. */
  unchanged: boolean;
}

export interface ReadRequest extends EntryRef {
  version?: number;
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
}

export interface ListResponse {
  entries: Entry[];
  next_cursor: string | null;
}

export interface HistoryRequest extends EntryRef {
  limit?: number;
  before?: number;
}

export interface HistoryResponse {
  versions: Entry[];
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
  mode?: 'hybrid' | 'text' | 'vector';
}

/** A result and why it ranked (`parts`) and matched (`highlights`), as the search service answers. */
export type SearchHit = SearchResult;
export type { Digest, Highlight as SearchHighlight, Pattern, ScoreParts, SearchResponse, Trace };

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
}

/** What an agent should know now: overview, digests, open items, recent changes, patterns, traces, confidence drops. */
export type Briefing = Awaited<ReturnType<typeof briefing>>;

export interface DigestQuery {
  namespace?: string;
  /** An entity path prefix, a source ("github"), or a scope id ("path:…", "source:…", "namespace:…"). */
  scope?: string;
  type?: (typeof DIGEST_TYPES)[number];
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
  kind?: Pattern['kind'];
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
  entry: Entry;
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
  webhook_url: string;
}

export interface ConnectorSettings {
  /** Slack: channel ids to monitor; empty = every channel. */
  channels?: string[];
  /** Jira: project id or "board-<id>" → project key. */
  projects?: Record<string, string>;
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
  events: Array<Record<string, unknown> & { id: string; at: string; action: string }>;
  next_cursor: string | null;
}
