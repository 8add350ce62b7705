import type { EntryValue } from '../domain/entry.ts';

/** A record as stored in an entry's value; anything else (a string, null) has no lifecycle yet. */
export type Fields = Record<string, unknown>;

export const fieldsOf = (value: EntryValue | null): Fields | null =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? value : null;

/** One provider event about a real-world object, as `mergeEvent` needs it. */
export interface LifecycleEvent {
  /** The provider's id of the event: a second arrival of the same id changes nothing. */
  id: string;
  /** When the provider says it happened (ISO 8601): orders events that arrive out of order. */
  at: string;
  /** The object's state as this event describes it. */
  snapshot: Fields;
  /** An entry to add to the object's timeline, if this event belongs there. */
  mark?: { list: string; entry: Fields & { id: string; at: string } };
}

/**
 * How far ahead of Cairn's receipt a provider's time may be and still order an object's events
 * as given: 5 minutes, for clocks that disagree (Slack's request window is as wide). A later
 * time is taken as the receipt time plus this, so that a signed event from the far future
 * (`occurred_at: 9999-12-31`, a provider's clock set wrong) cannot hold an entry in its state
 * against every real event after it: once that allowance has passed, later events win again.
 */
export const CLOCK_SKEW_ALLOWANCE_MS = 5 * 60_000;

/** A provider's time (ISO 8601) bounded by the receipt time (ms) plus CLOCK_SKEW_ALLOWANCE_MS; not a time: as given. */
export const notAfterReceipt = (at: string, receivedMs: number): string => {
  const limit = receivedMs + CLOCK_SKEW_ALLOWANCE_MS;
  const ms = Date.parse(at);
  return Number.isFinite(ms) && ms > limit ? new Date(limit).toISOString() : at;
};

/**
 * The most entries `mergeEvent` keeps in a list. Connectors whose lists grow with an object's
 * life bound them far lower after it and count what they let go (a PagerDuty incident's
 * timeline, a Jira issue's transitions): every event rewrites the whole entry, so its size is
 * what the object's history grows by per event.
 */
export const MAX_TIMELINE = 500;

const instant = (iso: unknown): number => {
  const ms = typeof iso === 'string' ? Date.parse(iso) : Number.NaN;
  return Number.isNaN(ms) ? Number.NEGATIVE_INFINITY : ms;
};

/**
 * Whether `event` describes a later state than the one the value holds. Ties on time are
 * broken by event id, so that the final state depends only on which events arrived, never
 * on the order they arrived in.
 */
const isLater = (current: Fields, event: LifecycleEvent): boolean => {
  const held = instant(current.last_event_at);
  const at = instant(event.at);
  if (at !== held) return at > held;
  return event.id > String(current.last_event_id ?? '');
};

const listOf = (current: Fields | null, name: string): Fields[] => {
  const list = current?.[name];
  return Array.isArray(list) ? list.filter((item): item is Fields => item !== null && typeof item === 'object') : [];
};

// Plain code-unit order for ties: locale collation could differ between replicas.
const byTimeThenId = (a: Fields, b: Fields): number => {
  const [x, y] = [String(a.id), String(b.id)];
  return instant(a.at) - instant(b.at) || (x < y ? -1 : x > y ? 1 : 0);
};

/**
 * Fold one event into an object's current value. The snapshot of the latest event (by the
 * provider's clock) wins, so a late "acknowledged" cannot undo "resolved"; the timeline keeps
 * every event once, in time order. Applying the same event twice gives the same value, which
 * is what lets a replayed delivery make no new version.
 */
export const mergeEvent = (currentValue: EntryValue | null, event: LifecycleEvent): Fields => {
  const current = fieldsOf(currentValue);
  const base: Fields = current === null || isLater(current, event)
    ? { ...event.snapshot, last_event_at: event.at, last_event_id: event.id }
    : { ...current };
  // Lists the snapshot does not carry survive from the current value.
  for (const [name, list] of Object.entries(current ?? {})) if (!(name in base) && Array.isArray(list)) base[name] = list;
  if (event.mark) {
    const list = listOf(current, event.mark.list);
    const known = list.some((item) => item.id === event.mark?.entry.id);
    base[event.mark.list] = known ? list : [...list, event.mark.entry].sort(byTimeThenId).slice(-MAX_TIMELINE);
  }
  return base;
};

/** A count stored in a value (`transitions_omitted`): a positive safe integer, else 0. */
export const countOf = (value: unknown): number => (typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : 0);

/**
 * Whether `item` is older than everything `kept` (in time order) still lists although `omitted`
 * older items were left out: then it is one of those, delivered again (a replay after the dedup
 * window), and adding it back would count it twice and make a version that changes nothing.
 */
export const isAmongOmitted = (item: Fields, kept: readonly Fields[], omitted: number): boolean => {
  const oldest = kept[0];
  return omitted > 0 && oldest !== undefined && byTimeThenId(item, oldest) < 0;
};

/** The earliest of some ISO instants, ignoring absent ones. */
export const earliest = (...candidates: unknown[]): string | null => {
  const present = candidates.filter((c): c is string => typeof c === 'string' && !Number.isNaN(Date.parse(c)));
  return present.length === 0 ? null : present.reduce((a, b) => (Date.parse(b) < Date.parse(a) ? b : a));
};

/** A provider timestamp as ISO 8601, or null when it is not a time at all. */
export const isoOf = (value: string | number | null | undefined): string | null => {
  if (value === null || value === undefined) return null;
  const ms = typeof value === 'number' ? value : Date.parse(value);
  return Number.isFinite(ms) && Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : null;
};
