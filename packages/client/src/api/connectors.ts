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
}

/** Deliveries a connector has taken in, by what became of them. */
export interface DeliveryCounts {
  received: number;
  written: number;
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
  /** What it captures: Slack's monitored channels, Jira's project map (for the dashboard's form). */
  settings: ConnectorSettings;
  last_event_at: string | null;
  counts: Omit<DeliveryCounts, 'last_event_at'>;
}
