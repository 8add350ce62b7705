import type { ConnectorSettings, EntryLink } from 'cairn-memory-client';
import type { EntryValue } from '../domain/entry.ts';

export type ConnectorName = 'pagerduty' | 'github' | 'slack' | 'jira';

/** One inbound delivery as the transport received it: the raw bytes are what was signed. */
export interface Delivery {
  /** Header names lower-cased; repeated headers joined by ", ". */
  headers: Readonly<Record<string, string | undefined>>;
  body: Buffer;
  /** Milliseconds since the epoch, for timestamp windows (Slack). */
  now: number;
}

/**
 * What the connector's settings say, for mapping decisions (monitored channels, project
 * keys). The same shape the connectors API lists and sets: declared once, in the client.
 */
export type { ConnectorSettings };

/**
 * One entry write a delivery maps to. Either a `value`, or an `update` that builds the new
 * value from the entry's current one (a thread accumulating replies, an incident timeline),
 * so that one real-world object stays one entry whose versions are its lifecycle.
 */
export interface MappedWrite {
  entity_path: string;
  key: string;
  event_type: string;
  confidence: number;
  value?: EntryValue;
  update?: (current: EntryValue | null) => EntryValue;
  memory_type?: string;
  tags?: string[];
  /** Entries this one relates to that the provider names (a pull request → the issues it closes). */
  links?: EntryLink[];
}

export type Outcome =
  /** Store these writes; `deliveryId` deduplicates replays. */
  | { kind: 'writes'; deliveryId: string; writes: MappedWrite[] }
  /** Acknowledge without storing (unmonitored channel, unknown event type). */
  | { kind: 'ignored'; deliveryId: string | null; reason: string }
  /** Answer the provider directly (Slack url_verification, GitHub ping). */
  | { kind: 'reply'; body: Record<string, unknown> };

/**
 * A connector turns one provider's deliveries into entry writes. It never touches storage:
 * `services/ingest-webhook.ts` verifies with `verify`, maps with `handle`, deduplicates and
 * writes. `handle` throws ServiceError BAD_REQUEST / VALIDATION_FAILED for malformed input.
 */
export interface Connector {
  name: ConnectorName;
  title: string;
  /** Where to paste the URL and secret in the provider's UI. */
  hint: string;
  /** Whether the provider can send our API key as a header; if not, the URL carries ?api_key=. */
  sendsHeaders: boolean;
  /** The provider generates the signing secret (it cannot take ours): enable must be given it. */
  issuesOwnSecret?: boolean;
  /** Media types the provider sends; others are refused with 415. Default: application/json. */
  contentTypes?: readonly string[];
  /** Check the provider's signature over the raw body; returns why it failed, or null. */
  verify(delivery: Delivery, secret: string): string | null;
  handle(delivery: Delivery, settings: ConnectorSettings): Outcome;
}
