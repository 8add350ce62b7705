/** The server's answers, as the dashboard reads them (SPEC §3, §5; src/http/routes). */

export type EntryValue = string | Record<string, unknown>;

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
  created_at: string;
  written_at: string;
  expires_at: string | null;
  deleted: boolean;
}

export interface ConnectorView {
  name: string;
  title: string;
  hint: string;
  enabled: boolean;
  managed_by: 'config' | 'api' | null;
  has_signing_secret: boolean;
  key_in_url: boolean;
  enabled_at: string | null;
  last_event_at: string | null;
  settings?: { channels?: string[]; projects?: Record<string, string> };
  counts: { received: number; written: number; duplicates: number; ignored: number; rejected: number };
  webhook_url: string;
}

export interface EnableAnswer {
  name: string;
  enabled: true;
  signing_secret: string | null;
  webhook_url: string;
}

export interface Highlight {
  field: string;
  fragment: string;
  matches: Array<[number, number]>;
}

export interface SearchResult {
  entry: Entry;
  score: number;
  parts: { text: { rank: number } | null; vector: { rank: number; similarity: number } | null };
  highlights: Highlight[];
}

export type Item = Record<string, unknown>;

export interface Digest {
  scope: string;
  kind: 'path' | 'source' | 'namespace';
  type: string;
  entity_path: string | null;
  version: number;
  compiled_at: string;
  headline: string;
  facts: Item;
  open_items: Item[];
  recent_changes: Item[];
}

export interface Pattern {
  id: string;
  kind: string;
  entity_path: string;
  title: string;
  detail: Item;
  evidence: Array<{ entity_path: string; key: string; version: number; at: string | null }>;
  detected_at: string;
}

export interface TraceLink {
  step: number;
  role: string;
  entity_path: string;
  key: string;
  version: number;
  event: string;
  at: string | null;
  summary: string;
}

export interface Trace {
  id: string;
  service: string;
  title: string;
  reason: string;
  chain: TraceLink[];
  detected_at: string;
}

export interface CortexStatus {
  status: 'active' | 'standby' | 'stopped';
  worker_id: string | null;
  heartbeat_at: string | null;
  lag_ms: number;
  queue_depth: number;
  digests: number;
  last_compiled_at: string | null;
  workers: Item[];
}

export interface ManagedKey {
  id: string;
  name: string;
  scopes: string[];
  prefixes: string[] | null;
  namespace: string;
  team?: string | null;
  created_at: string;
  revoked_at?: string | null;
  last_used_at?: string | null;
}

export interface AuditEvent {
  id: string;
  at: string;
  action: string;
  actor: { key_id: string | null; agent_id: string };
  request_id?: string;
  target?: Item;
  changes?: Item;
}
