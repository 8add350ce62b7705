import type { ConnectorSettings, EntryLink } from 'cairn-memory-client';
import type { Entry, EntryValue } from '../domain/entry.ts';

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
 * A delivery's media type: its Content-Type without parameters, lower-cased, as media types
 * are case-insensitive (`Application/JSON; charset=utf-8` is `application/json`).
 */
export const mediaTypeOf = (delivery: Delivery): string => (delivery.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();

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
  /**
   * The relations this write decides (default: those in `links`): the current version's links
   * with these relations are replaced by `links`. Links with any other relation — set by the
   * Cortex (an incident's `caused_by` deploy) or by an agent — are carried to the new version,
   * so a provider's next event never drops what others linked.
   */
  linkRelations?: string[];
  /**
   * Whether the current version already says what this write would (the event endpoint: the
   * same content as the current version, SPEC §5's `unchanged`): then no version is made,
   * though the write's provenance (its event id) differs.
   */
  repeats?: (current: Entry) => boolean;
}

/** A small fact or held item a connector keeps between deliveries, by id. */
export interface Remembered {
  id: string;
  data: Record<string, unknown>;
}

/**
 * What earlier deliveries taught a connector, as read for one delivery: a connector never
 * touches storage, so it names what it wants (`wants`) and the ingest service reads it from
 * shared records (the same on every replica). `facts`: learned facts by id (an incident's
 * service, a Jira project id's key); `held`: per object, items kept because the object was
 * not known yet (a PagerDuty note that arrived before its incident), oldest first.
 */
export interface Recollection {
  facts: ReadonlyMap<string, Record<string, unknown>>;
  held: ReadonlyMap<string, readonly Remembered[]>;
}

/** What a delivery needs recalled before it is mapped: fact ids and objects with held items. */
export interface Wants {
  facts: string[];
  held: string[];
}

/** A connector's memory before any delivery taught it anything (and for mapping in isolation). */
export const NOTHING_RECALLED: Recollection = { facts: new Map(), held: new Map() };

export type Outcome =
  /**
   * Store these writes; `deliveryId` deduplicates replays. After they are stored, `learn`
   * puts facts for later deliveries and `release` removes the held items the writes joined.
   */
  | { kind: 'writes'; deliveryId: string; writes: MappedWrite[]; learn?: Remembered[]; release?: { object: string; ids: string[] } }
  /** Keep `item` until `object` is known; a later delivery about it joins it (never dropped). */
  | { kind: 'held'; deliveryId: string; object: string; item: Remembered; reason: string }
  /** Acknowledge without storing (unmonitored channel, unknown event type). */
  | { kind: 'ignored'; deliveryId: string | null; reason: string }
  /** Answer the provider directly (Slack url_verification, GitHub ping). */
  | { kind: 'reply'; body: Record<string, unknown>; why: string };

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
  /**
   * The event type and delivery id as the delivery log shows them, read from headers or the
   * body without validating either (refused deliveries are logged too); null where absent.
   */
  peek(delivery: Delivery): { event: string | null; deliveryId: string | null };
  /** What to recall before `handle`, read from the body without trusting it; absent: nothing. */
  wants?(delivery: Delivery): Wants;
  handle(delivery: Delivery, settings: ConnectorSettings, recalled?: Recollection): Outcome;
  /** Settings shown beside the ones a person set, from what the connector learned (Jira's project map). */
  learnedSettings?(facts: readonly Remembered[]): Pick<ConnectorSettings, 'learned_projects'>;
}
