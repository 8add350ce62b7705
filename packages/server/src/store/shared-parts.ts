import type { Entry } from '../domain/entry.ts';
import { UNTESTED } from '../domain/evidence.ts';

const NONE: never[] = Object.freeze([]) as never[];
const EMPTY: Record<string, never> = Object.freeze({});

/**
 * One copy of each label (agent_id, event_type): a store's entries name few writers and event
 * kinds, but JSON.parse makes a string per entry of anything over ten characters
 * ("external/pagerduty"). Bounded, in case a deployment gives every entry its own.
 */
const MAX_LABELS = 4_096;
const labels = new Map<string, string>();

const label = (text: string): string => {
  const known = labels.get(text);
  if (known !== undefined) return known;
  if (labels.size < MAX_LABELS) labels.set(text, text);
  return text;
};

/**
 * Replace the empty parts of a head just parsed from JSON (no tags, no links, no provenance,
 * no outcomes) by one shared frozen value each, its labels by their shared copy, and its
 * written_at by created_at when they are the same instant; then freeze it. A store holds
 * every head in memory, and parsed, each of those parts is an object of its own: five
 * objects and about 190 bytes an entry, which every full collection of the garbage collector
 * walks. Heads are immutable, so sharing is safe; a head frozen already is left as it is.
 */
export const freezeHead = (head: Entry): Entry => {
  if (Object.isFrozen(head)) return head;
  // Versions written by earlier releases may lack a part: it stays absent.
  if (head.tags?.length === 0) head.tags = NONE;
  if (head.links?.length === 0) head.links = NONE;
  if (head.provenance && isEmpty(head.provenance)) head.provenance = EMPTY;
  if (head.evidence?.successes === 0 && head.evidence.failures === 0 && head.evidence.status === 'untested') head.evidence = UNTESTED;
  if (head.written_at === head.created_at) head.written_at = head.created_at;
  if (typeof head.agent_id === 'string') head.agent_id = label(head.agent_id);
  if (typeof head.event_type === 'string') head.event_type = label(head.event_type);
  return Object.freeze(head);
};

const isEmpty = (o: object): boolean => {
  for (const _ in o) return false;
  return true;
};
