/**
 * Connectors as `/api/v1/connectors` lists them (SPEC §7): state, settings and delivery
 * counters, never a secret. The server's connectors and services use these same types.
 */

/** What a connector captures, as listed and as set with `PUT …/settings`. */
export interface ConnectorSettings {
  /** Slack: channel ids to monitor; empty = every channel. */
  channels?: string[];
  /** Jira: project id or "board-<id>" → project key. */
  projects?: Record<string, string>;
  /**
   * Jira, as listed only: what earlier issue deliveries taught (project id → key, and the
   * boards of their sprints); `projects` overrides any of them.
   */
  learned_projects?: Record<string, string>;
}

/** Deliveries a connector has taken in, by what became of them. */
export interface DeliveryCounts {
  received: number;
  written: number;
  /** Taken in under a new delivery id, but every entry it maps to already held it (or a later state): no version. */
  unchanged: number;
  duplicates: number;
  ignored: number;
  rejected: number;
  last_event_at: string | null;
}

export interface ConnectorView {
  name: string;
  title: string;
  hint: string;
  enabled: boolean;
  /** `config`: enabled by the server's environment, so the API cannot change it. */
  managed_by: 'config' | 'api' | null;
  has_signing_secret: boolean;
  /** Whether the webhook URL must carry ?api_key= (the provider cannot send headers). */
  key_in_url: boolean;
  enabled_at: string | null;
  /**
   * When its signing secret was last rotated since it was enabled; null if never. A secret
   * shown on enable or rotate is the one in use while `enabled_at` and `rotated_at` are the
   * ones that answer carried.
   */
  rotated_at: string | null;
  /** What it captures: Slack's monitored channels, Jira's project map (for the dashboard's form). */
  settings: ConnectorSettings;
  last_event_at: string | null;
  counts: Omit<DeliveryCounts, 'last_event_at'>;
}

/**
 * What became of one delivery, as the recent-deliveries log names it. `unchanged`: accepted,
 * but every entry it maps to already held what it says, or a later state (a late or repeated
 * delivery under a new id), so it made no version.
 */
export type DeliveryOutcomeName = 'written' | 'unchanged' | 'duplicate' | 'ignored' | 'rejected';

/**
 * One line of a connector's recent-deliveries log (`GET /api/v1/connectors/<name>/deliveries`):
 * what a person setting up a webhook needs to see, never the body or the secret.
 */
export interface DeliveryLine {
  /** Position in the connector's log; higher is later. */
  seq: number;
  /** When Cairn received it (ISO 8601). */
  at: string;
  /** The provider's event type (GitHub `pull_request.opened`, Jira `sprint_started`), when it names one. */
  event: string | null;
  /** The provider's delivery id, when the delivery carries one. */
  delivery_id: string | null;
  outcome: DeliveryOutcomeName;
  /** The HTTP status Cairn answered. */
  status: number;
  /** Why, in words: the refusal (bad signature, stale timestamp, not JSON…), why it was ignored, or what was written. */
  reason: string | null;
}

/** The answer of `GET /api/v1/connectors/<name>/deliveries`: newest first, at most 100. */
export interface DeliveryLog {
  name: string;
  deliveries: DeliveryLine[];
}
