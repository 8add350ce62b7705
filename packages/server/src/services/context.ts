import type { Config } from '../config.ts';
import type { CortexStatus } from '../cortex/heartbeat.ts';
import type { Access } from '../domain/access.ts';
import type { BackendCapabilities } from '../ports/backend.ts';
import type { Embedder } from '../ports/embedder.ts';
import type { SearchIndex } from '../ports/search-index.ts';
import type { Store } from '../ports/store.ts';
import type { DeliveryCounters } from './delivery-counters.ts';
import type { DeliveryLog } from './delivery-log.ts';

/**
 * Who is asking, built by a transport (HTTP, MCP, CLI) for each call. Services decide with
 * it and never look at transport details.
 */
export interface Context {
  requestId: string;
  /** Namespace the caller works in unless it names one it may use. */
  namespace: string;
  /** Writer identity used when a write does not name its own `agent_id`. */
  agentId: string;
  /** What the caller's key allows (see authorize.ts); absent for the server's own work. */
  access?: Access;
}

/** One change for the audit log, with who made it taken from the Context. */
export interface AuditEvent {
  action: string;
  /** What was acted on: an entry address, a key id, a connector, a team. */
  target: Record<string, unknown>;
  /** What changed, never a secret (callers pass versions, names, scopes — not keys or signing secrets). */
  changes?: Record<string, unknown>;
}

/**
 * What services need from the audit log: record one change in a namespace, resolving once it
 * is stored. AuditLog (audit-log.ts) implements it; declared here so that ServiceDeps does
 * not name the implementation, which itself takes a Context.
 */
export interface AuditTrail {
  record(ctx: Context, namespace: string, event: AuditEvent): Promise<void>;
  /** Store what is recorded but not yet stored (events are stored in batches). */
  drain(): Promise<void>;
}

/** What services need from the running system. */
export interface ServiceDeps {
  store: Store;
  /** What the backend can do (shared across replicas or not). */
  capabilities: BackendCapabilities;
  /** Milliseconds since the epoch; a port so tests can move time (TTL). */
  now: () => number;
  config: Config;
  deliveries: DeliveryCounters;
  /** Each connector's recent deliveries, with what became of them and why. */
  deliveryLog: DeliveryLog;
  audit: AuditTrail;
  /** Search over live heads; absent where a transport runs without it (search answers 503). */
  search?: SearchIndex;
  /** Embeds search queries; the same embedder the index uses. Absent: vector search is off. */
  embedder?: Embedder | null;
  /** The Cortex worker embedded in this process (`cairn serve --with-cortex`), if any. */
  cortex?: { status(): CortexStatus; idle(): Promise<void> };
}
